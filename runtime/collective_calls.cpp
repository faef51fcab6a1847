// The public collectives: validate arguments (bad input changes nothing), then run the
// algorithm in order with the communicator's other operations.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>

#include "exec/executor.hpp"
#include "runtime/communicator_impl.hpp"
#include "core/errors.hpp"
#include "core/log.hpp"

namespace tiercc {
namespace {

void requireType(DataType dt) {
  int v = static_cast<int>(dt);
  TIERCC_REQUIRE_ARG(v >= 0 && v < kNumDataTypes, "unknown datatype ", v, " (valid: 0..", kNumDataTypes - 1, ")");
}

void requireOp(ReduceOp op) {
  int v = static_cast<int>(op);
  TIERCC_REQUIRE_ARG(v >= 0 && v < kNumReduceOps, "unknown reduction op ", v, " (valid: 0..", kNumReduceOps - 1, ")");
}

/// Bytes of `count` elements times `factor`, or InvalidArgument if that overflows.
std::size_t byteSize(const char* name, std::size_t count, DataType dt, std::size_t factor = 1) {
  std::size_t es = dataTypeSize(dt);
  TIERCC_REQUIRE_ARG(count <= SIZE_MAX / es / factor, name, ": count ", count, " of ", toString(dt),
                     " overflows the address space");
  return count * es * factor;
}

/// Null buffers (for non-empty data) and overlapping send/recv are rejected, except the exact
/// in-place form of the collective: send == inPlaceSend (NCCL's definitions).
void requireBuffers(const char* name, const void* send, std::size_t sendBytes, const void* recv, std::size_t recvBytes,
                    const void* inPlaceSend) {
  TIERCC_REQUIRE_ARG(sendBytes == 0 || send, name, ": send buffer is null");
  TIERCC_REQUIRE_ARG(recvBytes == 0 || recv, name, ": receive buffer is null");
  if (!sendBytes || !recvBytes || send == inPlaceSend) return;
  auto s = reinterpret_cast<std::uintptr_t>(send), r = reinterpret_cast<std::uintptr_t>(recv);
  TIERCC_REQUIRE_ARG(s + sendBytes <= r || r + recvBytes <= s, name,
                     ": send and receive buffers overlap without being the in-place form of this collective");
}

void requireRank(const char* name, const char* what, int rank, int size) {
  TIERCC_REQUIRE_ARG(rank >= 0 && rank < size, name, ": ", what, " ", rank, " is not in [0, ", size, ")");
}

}  // namespace

void Communicator::Impl::execute(const char* name, std::uint64_t seq, BodyRef body) {
  if (aborted_.load()) fail(ErrorCode::Aborted, name, " #", seq, ": the communicator was aborted");
  if (broken_.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lock(statsMutex_);
    std::rethrow_exception(brokenBy_);
  }
  // Operations run one at a time (the queue's exec lock): the name's buffer is reused.
  char digits[24];
  const auto printed = std::to_chars(digits, digits + sizeof(digits), seq);
  callName_.assign(name).append(" #").append(digits, printed.ptr);
  CallStats delta;
  CollContext ctx{topo_,
                  *domain_,
                  transport_.get(),
                  scratch_,
                  epoch_,
                  delta,
                  seq,
                  callName_,
                  Deadline::afterCoarse(timeout_),
                  tuning_,
                  scaleUpLink_.get(),
                  scaleOutLink_.get(),
                  timeout_,
                  selector_.get()};
  TIERCC_LOG(Trace, Coll) << ctx.what << " start";
  try {
    body(ctx);
  } catch (const Error& e) {
    failed(e);
    // A wait woken by the failure detector reports the rank it declared failed.
    std::lock_guard<std::mutex> lock(statsMutex_);
    std::rethrow_exception(brokenBy_);
  } catch (const std::exception& e) {
    // Operations may be posted that reference this collective's stack: stop the tiers.
    Error wrapped(ErrorCode::Internal, ctx.what + ": " + e.what());
    failed(wrapped);
    throw wrapped;
  }
  std::lock_guard<std::mutex> lock(statsMutex_);
  stats_.collectives += 1;
  stats_.scaleUpBytes += delta.scaleUpBytes;
  stats_.scaleOutBytes += delta.scaleOutBytes;
  stats_.scaleOutBoundBytes += delta.scaleOutBoundBytes;
  if (!delta.algorithm.empty()) stats_.algorithm = delta.algorithm;
  if (!delta.scaleUpPath.empty()) stats_.scaleUpPath = delta.scaleUpPath;
}

// A failed collective leaves the tiers mid-protocol: the communicator stops (later calls get
// the same error) and tells its peers, so that they fail now rather than at their deadline.
void Communicator::Impl::failed(const Error& e) {
  std::string reason = e.what();
  {
    std::lock_guard<std::mutex> lock(statsMutex_);
    if (!brokenBy_) brokenBy_ = std::make_exception_ptr(e);
    broken_.store(true, std::memory_order_release);
    try {
      std::rethrow_exception(brokenBy_);
    } catch (const Error& first) {
      reason = first.what();  // peers hear the root cause, not the wake-up it caused here
    }
  }
  TIERCC_LOG(Warn, Coll) << reason;
  domain_->poison(reason);
  if (transport_) transport_->abort();
}

// Point-to-point operations do not take a collective sequence number (only two ranks see
// them); each (direction, peer) pair numbers its own messages.
void Communicator::Impl::runPointToPoint(bool isSend, int peer, BodyRef body) {
  if (aborted_.load()) fail(ErrorCode::Aborted, isSend ? "send" : "recv", ": the communicator was aborted");
  std::uint64_t pairSeq = (isSend ? sendSeq_ : recvSeq_)[peer]++;
  std::string name = concat(isSend ? "send to rank " : "recv from rank ", peer);
  queue_.runInline([&] { execute(name.c_str(), pairSeq, body); });
}

void Communicator::Impl::runBlocking(const char* name, BodyRef body) {
  if (aborted_.load()) fail(ErrorCode::Aborted, name, ": the communicator was aborted");
  std::uint64_t seq = nextSeq_++;
  queue_.runInline([&] { execute(name, seq, body); });
}

Work Communicator::Impl::runAsync(const char* name, std::function<void(CollContext&)> body) {
  if (aborted_.load()) fail(ErrorCode::Aborted, name, ": the communicator was aborted");
  std::uint64_t seq = nextSeq_++;
  return queue_.submit([this, name, seq, body = std::move(body)] { execute(name, seq, body); });
}

// ---- public API --------------------------------------------------------------------------

namespace {

Communicator::Impl& live(const std::unique_ptr<Communicator::Impl>& impl) {
  return Communicator::Impl::live(impl, "operation");
}

// base + delta bytes as an address to compare with, never dereferenced.
const void* shifted(const void* base, std::ptrdiff_t delta) {
  return reinterpret_cast<const void*>(reinterpret_cast<std::uintptr_t>(base) + delta);
}

auto allreduceBody(const void* send, void* recv, std::size_t count, DataType dt, ReduceOp op) {
  requireType(dt);
  requireOp(op);
  std::size_t bytes = byteSize("allreduce", count, dt);
  requireBuffers("allreduce", send, bytes, recv, bytes, recv);
  return [=](CollContext& ctx) { runCollective(ctx, {Collective::AllReduce, send, recv, count, dt, op}); };
}

auto reduceScatterBody(int rank, int size, const void* send, void* recv, std::size_t recvCount, DataType dt,
                       ReduceOp op) {
  requireType(dt);
  requireOp(op);
  std::size_t recvBytes = byteSize("reduce_scatter", recvCount, dt);
  std::size_t sendBytes = byteSize("reduce_scatter", recvCount, dt, size);
  // In place: recv == send + rank x recvCount.
  requireBuffers("reduce_scatter", send, sendBytes, recv, recvBytes,
                 shifted(recv, -static_cast<std::ptrdiff_t>(rank * recvBytes)));
  return [=](CollContext& ctx) { runCollective(ctx, {Collective::ReduceScatter, send, recv, recvCount, dt, op}); };
}

auto allgatherBody(int rank, int size, const void* send, void* recv, std::size_t sendCount, DataType dt) {
  requireType(dt);
  std::size_t sendBytes = byteSize("allgather", sendCount, dt);
  std::size_t recvBytes = byteSize("allgather", sendCount, dt, size);
  // In place: send == recv + rank x sendCount.
  requireBuffers("allgather", send, sendBytes, recv, recvBytes,
                 shifted(recv, static_cast<std::ptrdiff_t>(rank * sendBytes)));
  return [=](CollContext& ctx) { runCollective(ctx, {Collective::AllGather, send, recv, sendCount, dt}); };
}

auto broadcastBody(int rank, int size, const void* send, void* recv, std::size_t count, DataType dt, int root) {
  requireType(dt);
  requireRank("broadcast", "root", root, size);
  std::size_t bytes = byteSize("broadcast", count, dt);
  requireBuffers("broadcast", send, rank == root ? bytes : 0, recv, bytes, recv);
  return [=](CollContext& ctx) {
    runCollective(ctx, {Collective::Broadcast, send, recv, count, dt, ReduceOp::Sum, root});
  };
}

auto reduceBody(int rank, int size, const void* send, void* recv, std::size_t count, DataType dt, ReduceOp op,
                int root) {
  requireType(dt);
  requireOp(op);
  requireRank("reduce", "root", root, size);
  std::size_t bytes = byteSize("reduce", count, dt);
  requireBuffers("reduce", send, bytes, recv, rank == root ? bytes : 0, recv);
  return [=](CollContext& ctx) { runCollective(ctx, {Collective::Reduce, send, recv, count, dt, op, root}); };
}

auto alltoallBody(int size, const void* send, void* recv, std::size_t countPerPeer, DataType dt) {
  requireType(dt);
  std::size_t bytes = byteSize("alltoall", countPerPeer, dt, size);
  requireBuffers("alltoall", send, bytes, recv, bytes, recv);
  return [=](CollContext& ctx) { runCollective(ctx, {Collective::AllToAll, send, recv, countPerPeer, dt}); };
}

// Extent in bytes of the blocks (counts, displacements in elements) of one side.
std::size_t vectorExtent(const char* side, const std::size_t* counts, const std::size_t* displs, int size,
                         DataType dt) {
  TIERCC_REQUIRE_ARG(counts && displs, "alltoallv: ", side, " counts and displacements must not be null");
  std::size_t end = 0;
  for (int r = 0; r < size; ++r) {
    TIERCC_REQUIRE_ARG(counts[r] <= SIZE_MAX - displs[r], "alltoallv: ", side, " block ", r, " overflows");
    if (counts[r]) end = std::max(end, byteSize("alltoallv", counts[r] + displs[r], dt));
  }
  return end;
}

auto alltoallvBody(int rank, int size, const void* send, const std::size_t* sendCounts, const std::size_t* sendDispls,
                   void* recv, const std::size_t* recvCounts, const std::size_t* recvDispls, DataType dt) {
  requireType(dt);
  const std::size_t sendBytes = vectorExtent("send", sendCounts, sendDispls, size, dt);
  const std::size_t recvBytes = vectorExtent("receive", recvCounts, recvDispls, size, dt);
  requireBuffers("alltoallv", send, sendBytes, recv, recvBytes, nullptr);
  TIERCC_REQUIRE_ARG(sendCounts[rank] == recvCounts[rank], "alltoallv: this rank sends itself ", sendCounts[rank],
                     " elements but expects ", recvCounts[rank], " from itself");
  // Copies: an async call's arrays need not outlive the call.
  std::vector<std::size_t> sc(sendCounts, sendCounts + size), sd(sendDispls, sendDispls + size);
  std::vector<std::size_t> rc(recvCounts, recvCounts + size), rd(recvDispls, recvDispls + size);
  return [=](CollContext& ctx) {
    CollArgs a{Collective::AllToAllv, send, recv, 0, dt};
    a.sendCounts = sc.data();
    a.sendDispls = sd.data();
    a.recvCounts = rc.data();
    a.recvDispls = rd.data();
    runCollective(ctx, a);
  };
}

auto barrierBody() {
  return [](CollContext& ctx) { runCollective(ctx, {Collective::Barrier, nullptr, nullptr, 0, DataType::U8}); };
}

}  // namespace

void Communicator::allreduce(const void* send, void* recv, std::size_t count, DataType dt, ReduceOp op) {
  live(impl_).runBlocking("allreduce", allreduceBody(send, recv, count, dt, op));
}
Work Communicator::allreduceAsync(const void* send, void* recv, std::size_t count, DataType dt, ReduceOp op) {
  return live(impl_).runAsync("allreduce", allreduceBody(send, recv, count, dt, op));
}

void Communicator::reduceScatter(const void* send, void* recv, std::size_t recvCount, DataType dt, ReduceOp op) {
  Impl& c = live(impl_);
  c.runBlocking("reduce_scatter", reduceScatterBody(rank(), size(), send, recv, recvCount, dt, op));
}
Work Communicator::reduceScatterAsync(const void* send, void* recv, std::size_t recvCount, DataType dt, ReduceOp op) {
  Impl& c = live(impl_);
  return c.runAsync("reduce_scatter", reduceScatterBody(rank(), size(), send, recv, recvCount, dt, op));
}

void Communicator::allgather(const void* send, void* recv, std::size_t sendCount, DataType dt) {
  Impl& c = live(impl_);
  c.runBlocking("allgather", allgatherBody(rank(), size(), send, recv, sendCount, dt));
}
Work Communicator::allgatherAsync(const void* send, void* recv, std::size_t sendCount, DataType dt) {
  Impl& c = live(impl_);
  return c.runAsync("allgather", allgatherBody(rank(), size(), send, recv, sendCount, dt));
}

void Communicator::broadcast(const void* send, void* recv, std::size_t count, DataType dt, int root) {
  Impl& c = live(impl_);
  c.runBlocking("broadcast", broadcastBody(rank(), size(), send, recv, count, dt, root));
}
Work Communicator::broadcastAsync(const void* send, void* recv, std::size_t count, DataType dt, int root) {
  Impl& c = live(impl_);
  return c.runAsync("broadcast", broadcastBody(rank(), size(), send, recv, count, dt, root));
}

void Communicator::reduce(const void* send, void* recv, std::size_t count, DataType dt, ReduceOp op, int root) {
  Impl& c = live(impl_);
  c.runBlocking("reduce", reduceBody(rank(), size(), send, recv, count, dt, op, root));
}
Work Communicator::reduceAsync(const void* send, void* recv, std::size_t count, DataType dt, ReduceOp op, int root) {
  Impl& c = live(impl_);
  return c.runAsync("reduce", reduceBody(rank(), size(), send, recv, count, dt, op, root));
}

void Communicator::alltoall(const void* send, void* recv, std::size_t countPerPeer, DataType dt) {
  Impl& c = live(impl_);
  c.runBlocking("alltoall", alltoallBody(size(), send, recv, countPerPeer, dt));
}
Work Communicator::alltoallAsync(const void* send, void* recv, std::size_t countPerPeer, DataType dt) {
  Impl& c = live(impl_);
  return c.runAsync("alltoall", alltoallBody(size(), send, recv, countPerPeer, dt));
}

void Communicator::alltoallv(const void* send, const std::size_t* sendCounts, const std::size_t* sendDispls, void* recv,
                             const std::size_t* recvCounts, const std::size_t* recvDispls, DataType dt) {
  Impl& c = live(impl_);
  c.runBlocking("alltoallv",
                alltoallvBody(rank(), size(), send, sendCounts, sendDispls, recv, recvCounts, recvDispls, dt));
}
Work Communicator::alltoallvAsync(const void* send, const std::size_t* sendCounts, const std::size_t* sendDispls,
                                  void* recv, const std::size_t* recvCounts, const std::size_t* recvDispls,
                                  DataType dt) {
  Impl& c = live(impl_);
  return c.runAsync("alltoallv",
                    alltoallvBody(rank(), size(), send, sendCounts, sendDispls, recv, recvCounts, recvDispls, dt));
}

void Communicator::barrier() { live(impl_).runBlocking("barrier", barrierBody()); }
Work Communicator::barrierAsync() { return live(impl_).runAsync("barrier", barrierBody()); }

void Communicator::send(const void* buf, std::size_t count, DataType dt, int peer) {
  Impl& c = live(impl_);
  requireType(dt);
  requireRank("send", "peer", peer, size());
  TIERCC_REQUIRE_ARG(peer != rank(), "send: peer ", peer, " is this rank");
  std::size_t bytes = byteSize("send", count, dt);
  requireBuffers("send", buf, bytes, nullptr, 0, nullptr);
  c.runPointToPoint(true, peer, [=](CollContext& ctx) { sendPointToPoint(ctx, buf, bytes, peer, ctx.seq); });
}

void Communicator::recv(void* buf, std::size_t count, DataType dt, int peer) {
  Impl& c = live(impl_);
  requireType(dt);
  requireRank("recv", "peer", peer, size());
  TIERCC_REQUIRE_ARG(peer != rank(), "recv: peer ", peer, " is this rank");
  std::size_t bytes = byteSize("recv", count, dt);
  requireBuffers("recv", nullptr, 0, buf, bytes, nullptr);
  c.runPointToPoint(false, peer, [=](CollContext& ctx) { recvPointToPoint(ctx, buf, bytes, peer, ctx.seq); });
}

}  // namespace tiercc
