// The real collectives through the public API on the emulated scale-up backend
// (TIERCC_SCALEUP=emulated): allreduce small and large, reduce-scatter, allgather, broadcast,
// reduce, all-to-all and barrier, checked against the references. One job per topology runs
// every case; a small window makes the large cases take many rounds.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/collective_checks.hpp"
#include "tests/support/multiprocess.hpp"
#include "tiercc/tiercc.hpp"

namespace tiercc::test {
namespace {

void runAll(Communicator& c) {
  // Small (one-shot, latency) and large (many rounds of the 64 KiB window) allreduce.
  for (std::size_t count : {std::size_t{1}, std::size_t{7}, std::size_t{1000}, std::size_t{200000}})
    for (DataType dt : {DataType::F32, DataType::BF16, DataType::I32})
      for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Max, ReduceOp::Avg})
        for (bool inPlace : {false, true}) checkAllreduce(c, dt, op, count, inPlace);
  // Out of place only. Broadcast: non-roots pass a send buffer of their own, to be ignored.
  CheckOptions ownSendBuffer;
  ownSendBuffer.broadcastNonRootSendBuffer = true;
  const int roots[] = {0, c.size() - 1};
  for (std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{1001}, std::size_t{50000}})
    for (DataType dt : {DataType::F32, DataType::U64}) {
      checkReduceScatter(c, dt, ReduceOp::Sum, count, false);
      checkAllgather(c, dt, count, false);
      checkAlltoall(c, dt, count, false);
      for (int root : roots) {
        checkBroadcast(c, dt, count, root, false, ownSendBuffer);
        checkReduce(c, dt, ReduceOp::Sum, count, root, false);
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
