// Timed loops and checks for tiercc-perf (see runner.hpp). Inputs are small integers so that
// every reduction is exact in every type and the check can demand equality (avg of floats
// gets a relative tolerance for the rounding of the division).
#include "bench/perf/runner.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>

#include "core/convert.hpp"

namespace tiercc::perf {
namespace {

using Clock = std::chrono::steady_clock;

// User and system CPU seconds of this process so far, every thread (tiercc's worker among them).
double cpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

double inputValue(ReduceOp op, int rank, std::size_t i) {
  if (op == ReduceOp::Prod) return (i + rank) % 5 == 0 ? 2 : 1;
  return static_cast<double>((rank * 3 + i) % 13);
}

double blockValue(int from, int to, std::size_t i) { return static_cast<double>((from * 7 + to * 3 + i) % 100); }

double reducedValue(ReduceOp op, DataType dt, int n, std::size_t i) {
  double acc = inputValue(op, 0, i);
  for (int r = 1; r < n; ++r) {
    double v = inputValue(op, r, i);
    acc = op == ReduceOp::Prod ? acc * v : op == ReduceOp::Min ? std::min(acc, v) : op == ReduceOp::Max ? std::max(acc, v) : acc + v;
  }
  if (op != ReduceOp::Avg) return acc;
  if (!isFloatType(dt)) return std::trunc(acc / n);
  return dt == DataType::F64 ? acc / n : static_cast<double>(static_cast<float>(acc) / static_cast<float>(n));
}

void fill(DataType dt, std::byte* buf, std::size_t elems, const std::function<double(std::size_t)>& value) {
  const std::size_t es = dataTypeSize(dt);
  for (std::size_t i = 0; i < elems; ++i) encodeValue(dt, value(i), buf + i * es);
}

std::uint64_t countWrong(DataType dt, ReduceOp op, const std::byte* got, std::size_t elems,
                         const std::function<double(std::size_t)>& want) {
  const std::size_t es = dataTypeSize(dt);
  std::byte expect[8];
  std::uint64_t wrong = 0;
  for (std::size_t i = 0; i < elems; ++i) {
    encodeValue(dt, want(i), expect);
    if (std::memcmp(expect, got + i * es, es) == 0) continue;
    if (op == ReduceOp::Avg && isFloatType(dt)) {
      double a = decodeValue(dt, got + i * es), b = decodeValue(dt, expect);
      if (std::fabs(a - b) <= (es == 2 ? 1e-2 : 1e-6) * std::max(1.0, std::fabs(b))) continue;
    }
    ++wrong;
  }
  return wrong;
}

struct Call {
  const void* send;
  void* recv;
};

// The buffers of one call, out of place or in place as NCCL defines it for the collective.
Call placement(Coll coll, const Shape& s, int rank, std::size_t es, bool inPlace, std::byte* send, std::byte* recv) {
  if (!inPlace) return {send, recv};
  switch (coll) {
    case Coll::AllGather: return {recv + rank * s.count * es, recv};
    case Coll::ReduceScatter: return {send, send + rank * s.count * es};
    default: return {recv, recv};
  }
}

void invoke(Communicator& c, const Options& o, const Shape& s, Call call) {
  switch (o.coll) {
    case Coll::AllReduce: return c.allreduce(call.send, call.recv, s.count, o.dt, o.op);
    case Coll::ReduceScatter: return c.reduceScatter(call.send, call.recv, s.count, o.dt, o.op);
    case Coll::AllGather: return c.allgather(call.send, call.recv, s.count, o.dt);
    case Coll::Broadcast: return c.broadcast(call.send, call.recv, s.count, o.dt, o.root);
    case Coll::Reduce: return c.reduce(call.send, call.recv, s.count, o.dt, o.op, o.root);
    case Coll::AllToAll: return c.alltoall(call.send, call.recv, s.count, o.dt);
    case Coll::SendRecv: {
      const int n = c.size(), next = (c.rank() + 1) % n, prev = (c.rank() + n - 1) % n;
      // Even ranks send first, odd ranks receive first: the ring never waits on itself.
      if (c.rank() % 2 == 0) {
        c.send(call.send, s.count, o.dt, next);
        c.recv(call.recv, s.count, o.dt, prev);
      } else {
        c.recv(call.recv, s.count, o.dt, prev);
        c.send(call.send, s.count, o.dt, next);
      }
      return;
    }
  }
}

// Fills the inputs for this placement and returns where the result will be.
const std::byte* prepare(Communicator& c, const Options& o, const Shape& s, bool inPlace, std::byte* send, std::byte* recv) {
  const int rank = c.rank(), n = c.size();
  const std::size_t es = dataTypeSize(o.dt), count = s.count;
  std::byte* input = inPlace && o.coll != Coll::ReduceScatter ? recv : send;
  switch (o.coll) {
    case Coll::AllReduce:
    case Coll::Reduce:
    case Coll::ReduceScatter: fill(o.dt, input, s.sendElems, [&](std::size_t i) { return inputValue(o.op, rank, i); }); break;
    case Coll::Broadcast: fill(o.dt, input, count, [&](std::size_t i) { return blockValue(rank, rank, i); }); break;
    case Coll::AllGather:
      fill(o.dt, inPlace ? recv + rank * count * es : send, count, [&](std::size_t i) { return blockValue(rank, 0, i); });
      break;
    case Coll::AllToAll: fill(o.dt, input, s.sendElems, [&](std::size_t i) { return blockValue(rank, int(i / count), i % count); }); break;
    case Coll::SendRecv: fill(o.dt, send, count, [&](std::size_t i) { return blockValue(rank, 0, i); }); break;
  }
  (void)n;
  return o.coll == Coll::ReduceScatter && inPlace ? send + rank * count * es : recv;
}

std::uint64_t check(Communicator& c, const Options& o, const Shape& s, const std::byte* result) {
  const int rank = c.rank(), n = c.size();
  const std::size_t count = s.count;
  switch (o.coll) {
    case Coll::AllReduce: return countWrong(o.dt, o.op, result, count, [&](std::size_t i) { return reducedValue(o.op, o.dt, n, i); });
    case Coll::Reduce:
      return rank != o.root ? 0 : countWrong(o.dt, o.op, result, count, [&](std::size_t i) { return reducedValue(o.op, o.dt, n, i); });
    case Coll::ReduceScatter:
      return countWrong(o.dt, o.op, result, count, [&](std::size_t i) { return reducedValue(o.op, o.dt, n, rank * count + i); });
    case Coll::Broadcast: return countWrong(o.dt, o.op, result, count, [&](std::size_t i) { return blockValue(o.root, o.root, i); });
    case Coll::AllGather:
      return countWrong(o.dt, o.op, result, count * n, [&](std::size_t i) { return blockValue(int(i / count), 0, i % count); });
    case Coll::AllToAll:
      return countWrong(o.dt, o.op, result, count * n, [&](std::size_t i) { return blockValue(int(i / count), rank, i % count); });
    case Coll::SendRecv:
      return countWrong(o.dt, o.op, result, count, [&](std::size_t i) { return blockValue((rank + n - 1) % n, 0, i); });
  }
  return 0;
}

}  // namespace

Shape shapeOf(Coll coll, std::size_t bytes, DataType dt, int n) {
  const std::size_t es = dataTypeSize(dt), elems = bytes / es;
  const double spread = n > 1 ? (n - 1.0) / n : 1.0;
  Shape s;
  switch (coll) {
    case Coll::AllReduce:
      s = {elems, elems, elems, elems * es, n > 1 ? 2 * spread : 1};
      break;
    case Coll::ReduceScatter:
      s = {elems / n, elems / n * n, elems / n, elems / n * n * es, spread};
      break;
    case Coll::AllGather:
      s = {elems / n, elems / n, elems / n * n, elems / n * n * es, spread};
      break;
    case Coll::AllToAll:
      s = {elems / n, elems / n * n, elems / n * n, elems / n * n * es, spread};
      break;
    case Coll::Broadcast:
    case Coll::Reduce:
    case Coll::SendRecv:
      s = {elems, elems, elems, elems * es, 1};
      break;
  }
  return s;
}

Result measure(Communicator& comm, const Options& o, const Shape& s, bool inPlace, std::byte* send, std::byte* recv) {
  Result r;
  if (inPlace && o.coll == Coll::SendRecv) return r;  // a ring has no in-place form
  const std::size_t es = dataTypeSize(o.dt);
  Call call = placement(o.coll, s, comm.rank(), es, inPlace, send, recv);
  prepare(comm, o, s, inPlace, send, recv);
  for (int i = 0; i < o.warmup; ++i) invoke(comm, o, s, call);
  comm.barrier();
  TierStats before = comm.stats();
  const double cpuStart = cpuSeconds();
  auto start = Clock::now();
  for (int i = 0; i < o.iters; ++i) invoke(comm, o, s, call);
  double seconds = std::chrono::duration<double>(Clock::now() - start).count() / o.iters;
  double cpu = (cpuSeconds() - cpuStart) / o.iters, cpuAll = 0;
  TierStats after = comm.stats();

  std::uint64_t wrong = 0;
  if (o.check) {
    const std::byte* result = prepare(comm, o, s, inPlace, send, recv);
    invoke(comm, o, s, call);
    wrong = check(comm, o, s, result);
  }
  double local[5] = {seconds, 0, 0, 0, 0}, slowest[5];
  comm.allreduce(local, slowest, 1, DataType::F64, ReduceOp::Max);
  std::uint64_t counts[4] = {wrong, after.scaleUpBytes - before.scaleUpBytes, after.scaleOutBytes - before.scaleOutBytes,
                             after.scaleOutBoundBytes - before.scaleOutBoundBytes}, sums[4];
  comm.allreduce(counts, sums, 4, DataType::U64, ReduceOp::Sum);
  comm.allreduce(&cpu, &cpuAll, 1, DataType::F64, ReduceOp::Sum);
  r.ran = true;
  r.cpuUs = cpuAll * 1e6;
  r.timeUs = slowest[0] * 1e6;
  r.algbw = slowest[0] > 0 ? s.bytes / slowest[0] / 1e9 : 0;
  r.busbw = r.algbw * s.busFactor;
  r.wrong = sums[0];
  r.scaleUpBytes = double(sums[1]) / o.iters;
  r.scaleOutBytes = double(sums[2]) / o.iters;
  r.algorithm = after.algorithm;
  r.path = after.scaleUpPath;
  r.boundBytes = double(sums[3]) / o.iters;
  return r;
}

}  // namespace tiercc::perf
