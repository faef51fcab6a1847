// Every collective other than allreduce (which has its own suite) across topologies: each test
// is one multi-process job running broadcast, reduce, allgather, reduce-scatter, all-to-all and
// send/recv over datatypes, ops, counts, roots and both placements, against a reference
// computed independently. Also checks that slow-tier bytes equal the bound where it is exact.
#include <gtest/gtest.h>

#include "tests/collective_checks.hpp"
#include "tests/support/multiprocess.hpp"
#include "tests/support/transport_skip.hpp"
#include "tiercc/tiercc.hpp"

namespace tiercc::test {
namespace {

const DataType kTypes[] = {DataType::F32, DataType::BF16, DataType::I8, DataType::U64, DataType::F64};
const ReduceOp kOps[] = {ReduceOp::Sum, ReduceOp::Max, ReduceOp::Avg};

// A ring of sends: rank r sends to r+1 and receives from r-1, twice, checking order.
void checkSendRecv(Communicator& c, std::size_t count) {
  if (c.size() == 1) return;
  const int next = (c.rank() + 1) % c.size(), prev = (c.rank() + c.size() - 1) % c.size();
  for (int msg = 0; msg < 2; ++msg) {
    Buffer out = pattern(DataType::U8, count, c.rank(), msg), in(count, 0);
    if (c.rank() == 0) {
      c.send(out.data(), count, DataType::U8, next);
      c.recv(in.data(), count, DataType::U8, prev);
    } else {
      c.recv(in.data(), count, DataType::U8, prev);
      c.send(out.data(), count, DataType::U8, next);
    }
    TIERCC_CHECK(in == pattern(DataType::U8, count, prev, msg), "send/recv message " << msg << " from rank " << prev);
  }
}

void runAll(Communicator& c, const std::vector<std::size_t>& counts) {
  const int roots[] = {0, c.size() - 1, c.size() / 2};
  for (std::size_t count : counts)
    for (bool inPlace : {false, true})
      for (DataType dt : kTypes) {
        for (int root : roots) checkBroadcast(c, dt, count, root, inPlace);
        checkAllgather(c, dt, count, inPlace);
        checkAlltoall(c, dt, count, inPlace);
        for (ReduceOp op : kOps) {
          checkReduce(c, dt, op, count, roots[(count + static_cast<std::size_t>(op)) % 3], inPlace);
          checkReduceScatter(c, dt, op, count, inPlace);
        }
      }
  for (std::size_t count : counts) checkSendRecv(c, count);
}

struct Topo {
  int ranks;
  int domainSize;               // 0: use domainIds
  std::vector<int> domainIds;   // per rank, when uneven
};

void runTopology(const Topo& topo, std::vector<std::size_t> counts, std::vector<std::pair<std::string, std::string>> env = {}) {
  JobOptions jo;
  jo.env = env;
  jo.env.push_back({"TIERCC_TIMEOUT", "60s"});
  if (topo.domainSize) jo.env.push_back({"TIERCC_DOMAIN_SIZE", std::to_string(topo.domainSize)});
  if (!topo.domainIds.empty())
    jo.rankEnv = [&](int r) {
      return std::vector<std::pair<std::string, std::string>>{{"TIERCC_DOMAIN_ID", std::to_string(topo.domainIds[r])}};
    };
  JobResult result = runRanks(topo.ranks, [&](int rank, const std::string& store) {
    Communicator comm(store, topo.ranks, rank);
    runAll(comm, counts);
  }, jo);
  EXPECT_TRUE(result.ok()) << result.report();
}

const std::vector<std::size_t> kCounts{0, 1, 7, 1001};

TEST(Collectives, OneRank) { runTopology({1, 1, {}}, kCounts); }
TEST(Collectives, OneDomainOfThree) { runTopology({3, 3, {}}, kCounts); }
TEST(Collectives, TwoDomainsOfOne) { runTopology({2, 1, {}}, kCounts); }
TEST(Collectives, TwoDomainsOfTwo) { runTopology({4, 2, {}}, kCounts); }
TEST(Collectives, ThreeDomainsOfTwo) { runTopology({6, 2, {}}, kCounts); }
TEST(Collectives, TwoDomainsOfThree) { runTopology({6, 3, {}}, kCounts); }
TEST(Collectives, UnevenThreePlusOne) { runTopology({4, 0, {5, 5, 9, 5}}, kCounts); }
TEST(Collectives, UnevenTwoTwoOne) { runTopology({5, 2, {}}, kCounts); }
// The default transport here is tcp (UCX has only sockets on this machine); UCX carries the same
// matrix wherever it runs.
TEST(Collectives, ThreeDomainsOfTwoOverUcx) {
  TIERCC_SKIP_WITHOUT_TRANSPORT("ucx");
  runTopology({6, 2, {}}, kCounts, {{"TIERCC_TRANSPORT", "ucx"}});
}
// A 4 KiB window: many rounds per call, with slots smaller than a block.
TEST(Collectives, ManyRoundsSmallWindow) { runTopology({4, 2, {}}, {513, 3000}, {{"TIERCC_SHM_CHUNK", "4096"}}); }
// Eight fragments in flight (the deepest pipeline), 2 and 5 of them in uneven domains, and inside
// one domain, where only an asked depth pipelines (the hierarchical plans on the staged path:
// a broadcast's root runs rounds ahead of its readers): every slot of the window and scratch
// reused many times over a call.
TEST(Collectives, EightSlotsInFlight) {
  runTopology({4, 2, {}}, {513, 3000}, {{"TIERCC_SHM_CHUNK", "8192"}, {"TIERCC_PIPELINE_SLOTS", "8"}});
  runTopology({5, 2, {}}, {1001}, {{"TIERCC_SHM_CHUNK", "8192"}, {"TIERCC_PIPELINE_SLOTS", "4"}});
  runTopology({3, 3, {}}, {513, 3000},
              {{"TIERCC_SHM_CHUNK", "8192"},
               {"TIERCC_PIPELINE_SLOTS", "8"},
               {"TIERCC_PATH", "staged"},
               {"TIERCC_ALGO",
                "allreduce:hierarchical,reduce_scatter:hierarchical,allgather:hierarchical,"
                "broadcast:hierarchical,reduce:hierarchical,alltoall:hierarchical"}});
}

// On uniform domains the slow tier carries exactly the bound for each collective.
TEST(Collectives, ScaleOutBytesAtTheBound) {
  JobOptions jo;
  jo.env = {{"TIERCC_DOMAIN_SIZE", "2"}};
  JobResult result = runRanks(4, [](int rank, const std::string& store) {
    Communicator c(store, 4, rank);
    const std::size_t count = 1 << 16;  // f32 elements per block
    std::vector<float> a(4 * count, 1.0f), b(4 * count);
    auto check = [&](const char* what, auto&& run) {
      TierStats before = c.stats();
      run();
      TierStats after = c.stats();
      std::uint64_t mine[2] = {after.scaleOutBytes - before.scaleOutBytes,
                               after.scaleOutBoundBytes - before.scaleOutBoundBytes}, all[2];
      c.allreduce(mine, all, 2, DataType::U64, ReduceOp::Sum);
      TIERCC_CHECK(all[0] == all[1] && all[1] > 0, what << ": sent " << all[0] << " bytes, bound " << all[1]);
    };
    check("broadcast", [&] { c.broadcast(a.data(), b.data(), count, DataType::F32, 1); });
    check("reduce", [&] { c.reduce(a.data(), b.data(), count, DataType::F32, ReduceOp::Sum, 2); });
    check("allgather", [&] { c.allgather(a.data(), b.data(), count, DataType::F32); });
    check("reduce_scatter", [&] { c.reduceScatter(a.data(), b.data(), count, DataType::F32, ReduceOp::Sum); });
    check("alltoall", [&] { c.alltoall(a.data(), b.data(), count, DataType::F32); });
  }, jo);
  EXPECT_TRUE(result.ok()) << result.report();
}

}  // namespace
}  // namespace tiercc::test
