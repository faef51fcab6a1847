// The real collectives through the public API on the emulated scale-up backend
// (TIERCC_SCALEUP=emulated): allreduce small and large, reduce-scatter, allgather, broadcast,
// reduce, all-to-all and barrier, checked against the references. One job per topology runs
// every case; a small window makes the large cases take many rounds.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "tests/collective_reference.hpp"
#include "tests/support/multiprocess.hpp"
#include "tiercc/tiercc.hpp"

namespace tiercc::test {
namespace {

using Buffer = std::vector<std::uint8_t>;

// Small, exact in every type, different for every (from, to, i).
Buffer pattern(DataType dt, std::size_t count, int from, int to) {
  const std::size_t es = dataTypeSize(dt);
  Buffer b(count * es);
  for (std::size_t i = 0; i < count; ++i) encode(dt, double((from * 7 + to * 3 + i) % 100), b.data() + i * es);
  return b;
}

std::string label(const char* coll, DataType dt, std::size_t count) {
  return std::string(coll) + " " + toString(dt) + " count " + std::to_string(count);
}

void checkAllreduce(Communicator& c, DataType dt, ReduceOp op, std::size_t count, bool inPlace) {
  std::string what = label("allreduce", dt, count) + " " + toString(op) + (inPlace ? " in place" : "");
  Buffer in = inputBuffer(dt, op, c.rank(), count);
  Buffer out(in.size(), 0x5a);
  if (inPlace) out = in;
  c.allreduce(inPlace ? out.data() : in.data(), out.data(), count, dt, op);
  checkResult(dt, op, out, expectedBuffer(dt, op, c.size(), count), what);
}

void checkReduceScatter(Communicator& c, DataType dt, ReduceOp op, std::size_t count) {
  std::string what = label("reduce_scatter", dt, count) + " " + toString(op);
  const std::size_t es = dataTypeSize(dt);
  Buffer in = inputBuffer(dt, op, c.rank(), count * c.size());
  Buffer all = expectedBuffer(dt, op, c.size(), count * c.size());
  Buffer want(all.begin() + c.rank() * count * es, all.begin() + (c.rank() + 1) * count * es);
  Buffer out(count * es, 0x44);
  c.reduceScatter(in.data(), out.data(), count, dt, op);
  checkResult(dt, op, out, want, what);
}

void checkAllgather(Communicator& c, DataType dt, std::size_t count) {
  Buffer want;
  for (int r = 0; r < c.size(); ++r) {
    Buffer b = pattern(dt, count, r, 0);
    want.insert(want.end(), b.begin(), b.end());
  }
  Buffer in = pattern(dt, count, c.rank(), 0), out(want.size(), 0x33);
  c.allgather(in.data(), out.data(), count, dt);
  TIERCC_CHECK(out == want, label("allgather", dt, count) << ": wrong data");
}

void checkBroadcast(Communicator& c, DataType dt, std::size_t count, int root) {
  Buffer want = pattern(dt, count, root, root);
  Buffer in = c.rank() == root ? want : Buffer(want.size(), 0x11), out(want.size(), 0x22);
  c.broadcast(in.data(), out.data(), count, dt, root);
  TIERCC_CHECK(out == want, label("broadcast", dt, count) << " root " << root << ": wrong data");
}

void checkReduce(Communicator& c, DataType dt, ReduceOp op, std::size_t count, int root) {
  std::string what = label("reduce", dt, count) + " " + toString(op) + " root " + std::to_string(root);
  Buffer in = inputBuffer(dt, op, c.rank(), count), out(in.size(), 0x5a);
  c.reduce(in.data(), out.data(), count, dt, op, root);
  if (c.rank() == root) checkResult(dt, op, out, expectedBuffer(dt, op, c.size(), count), what);
  else TIERCC_CHECK(out == Buffer(in.size(), 0x5a), what << ": a non-root receive buffer was written");
}

void checkAlltoall(Communicator& c, DataType dt, std::size_t count) {
  Buffer in, want;
  for (int r = 0; r < c.size(); ++r) {
    Buffer b = pattern(dt, count, c.rank(), r), w = pattern(dt, count, r, c.rank());
    in.insert(in.end(), b.begin(), b.end());
    want.insert(want.end(), w.begin(), w.end());
  }
  Buffer out(in.size(), 0x55);
  c.alltoall(in.data(), out.data(), count, dt);
  TIERCC_CHECK(out == want, label("alltoall", dt, count) << ": wrong data");
}

void runAll(Communicator& c) {
  // Small (one-shot, latency) and large (many rounds of the 64 KiB window) allreduce.
  for (std::size_t count : {std::size_t{1}, std::size_t{7}, std::size_t{1000}, std::size_t{200000}})
    for (DataType dt : {DataType::F32, DataType::BF16, DataType::I32})
      for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Max, ReduceOp::Avg})
        for (bool inPlace : {false, true}) checkAllreduce(c, dt, op, count, inPlace);
  const int roots[] = {0, c.size() - 1};
  for (std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{1001}, std::size_t{50000}})
    for (DataType dt : {DataType::F32, DataType::U64}) {
      checkReduceScatter(c, dt, ReduceOp::Sum, count);
      checkAllgather(c, dt, count);
      checkAlltoall(c, dt, count);
      for (int root : roots) {
        checkBroadcast(c, dt, count, root);
        checkReduce(c, dt, ReduceOp::Sum, count, root);
      }
    }
  for (int i = 0; i < 20; ++i) c.barrier();
  // The emulated backend has no memory its peers map.
  try {
    c.allocShared(4096);
    TIERCC_CHECK(false, "allocShared succeeded on the emulated backend");
  } catch (const Error& e) {
    TIERCC_CHECK(e.code() == ErrorCode::NotSupported, "allocShared: " << toString(e.code()) << ": " << e.what());
  }
}

void runTopology(int ranks, int domainSize) {
  JobOptions jo;
  jo.env = {{"TIERCC_SCALEUP", "emulated"},
            {"TIERCC_TRANSPORT", "tcp"},
            {"TIERCC_DOMAIN_SIZE", std::to_string(domainSize)},
            {"TIERCC_SHM_CHUNK", "65536"},
            {"TIERCC_TIMEOUT", "60s"},
            {"TIERCC_DEBUG", "INFO"},
            {"TIERCC_DEBUG_SUBSYS", "INIT"}};
  jo.timeout = std::chrono::seconds(240);
  JobResult result = runRanks(ranks, [&](int rank, const std::string& store) {
    Communicator comm(store, ranks, rank);
    runAll(comm);
  }, jo);
  ASSERT_TRUE(result.ok()) << result.report();
  // The backend really was the emulated one, on every rank.
  for (const RankResult& r : result.ranks)
    EXPECT_NE(r.output.find("scale-up backend of domain " + std::to_string(r.rank / domainSize) + ": emulated"),
              std::string::npos)
        << "rank " << r.rank << " output:\n" << r.output;
}

TEST(EmulatedCollectives, OneDomainOfThree) { runTopology(3, 3); }
TEST(EmulatedCollectives, TwoDomainsOfTwo) { runTopology(4, 2); }

}  // namespace
}  // namespace tiercc::test
