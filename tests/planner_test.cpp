// The planner and the runtime agree: for every collective and every algorithm, forced with
// TIERCC_ALGO, the slow-tier bytes the ranks measure equal the bytes the algorithm's plan
// predicts, and the bound they record equals the plan's. Unforced, the runtime runs what the
// selector chooses. Exact byte counts, not timings.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include "plan/selector.hpp"
#include "core/params.hpp"
#include "tests/support/multiprocess.hpp"
#include "tiercc/tiercc.hpp"

namespace tiercc::test {
namespace {

// Divisible by every group size and power of two used here, so partitions are exact.
constexpr std::size_t kCount = 12 * 64;

Shape shapeOfJob(Communicator& c) {
  std::vector<int> mine{c.domain()}, all(c.size());
  c.allgather(mine.data(), all.data(), 1, DataType::I32);
  Shape s;
  s.domainOf = all;
  s.domainSizes.assign(c.numDomains(), 0);
  for (int d : all) ++s.domainSizes[d];
  return s;
}

// Runs `coll` once on `c` with kCount elements (per rank or per peer where that applies).
void runOnce(Communicator& c, Collective coll) {
  const int n = c.size();
  std::vector<float> in(kCount * n, 1.0f), out(kCount * n, 0.0f);
  std::vector<std::size_t> counts(n, kCount), displs(n);
  for (int r = 0; r < n; ++r) displs[r] = r * kCount;
  switch (coll) {
    case Collective::AllReduce:
      return c.allreduce(in.data(), out.data(), kCount, DataType::F32, ReduceOp::Sum);
    case Collective::ReduceScatter:
      return c.reduceScatter(in.data(), out.data(), kCount, DataType::F32, ReduceOp::Sum);
    case Collective::AllGather:
      return c.allgather(in.data(), out.data(), kCount, DataType::F32);
    case Collective::Broadcast:
      return c.broadcast(in.data(), out.data(), kCount, DataType::F32, n - 1);
    case Collective::Reduce:
      return c.reduce(in.data(), out.data(), kCount, DataType::F32, ReduceOp::Sum, n - 1);
    case Collective::AllToAll:
      return c.alltoall(in.data(), out.data(), kCount, DataType::F32);
    case Collective::AllToAllv:
      return c.alltoallv(in.data(), counts.data(), displs.data(), out.data(), counts.data(), displs.data(),
                         DataType::F32);
    case Collective::Barrier:
      return c.barrier();
  }
}

Request requestFor(Collective coll, int size) {
  Request req;
  req.coll = coll;
  req.count = coll == Collective::Barrier || coll == Collective::AllToAllv ? 0 : kCount;
  req.dt = coll == Collective::Barrier ? DataType::U8 : DataType::F32;
  req.root = size - 1;
  req.windowBytes = static_cast<std::size_t>(params::getInt("TIERCC_SHM_CHUNK"));
  req.radix = static_cast<int>(params::getInt("TIERCC_KNOMIAL_RADIX"));
  return req;
}

// Sum over ranks of this rank's delta of scale-out bytes and of the bound.
std::pair<std::uint64_t, std::uint64_t> measure(Communicator& c, Collective coll, std::string& algorithm) {
  const TierStats before = c.stats();
  runOnce(c, coll);
  const TierStats after = c.stats();
  algorithm = after.algorithm;
  std::uint64_t mine[2] = {after.scaleOutBytes - before.scaleOutBytes,
                           after.scaleOutBoundBytes - before.scaleOutBoundBytes};
  std::uint64_t all[2];
  c.allreduce(mine, all, 2, DataType::U64, ReduceOp::Sum);
  return {all[0], all[1]};
}

void checkTopology(int ranks, std::vector<int> domainIds) {
  JobOptions jo;
  jo.env = {{"TIERCC_TIMEOUT", "60s"}};
  jo.rankEnv = [&](int r) {
    return std::vector<std::pair<std::string, std::string>>{{"TIERCC_DOMAIN_ID", std::to_string(domainIds[r])}};
  };
  JobResult result = runRanks(
      ranks,
      [&](int rank, const std::string& store) {
        Communicator world(store, ranks, rank);
        for (int ci = 0; ci < kNumCollectives; ++ci) {
          const auto coll = static_cast<Collective>(ci);
          std::vector<std::string> algos = algorithmsFor(coll);
          algos.push_back("auto");
          for (const std::string& algo : algos) {
            setenv("TIERCC_ALGO", (std::string(toString(coll)) + ":" + algo).c_str(), 1);
            Communicator c = world.split(0, rank);  // a new communicator reads TIERCC_ALGO
            const Shape shape = shapeOfJob(c);
            const Request req = requestFor(coll, ranks);
            if (algo != "auto" && !unsupportedReason(algo, req, shape).empty()) continue;
            std::string ran;
            const auto [sent, bound] = measure(c, coll, ran);
            const std::string what = std::string(toString(coll)) + ":" + algo;
            std::string expected = algo;
            if (algo == "auto") {
              Selector sel(shape, TierModel::fromParams(), AlgoOverrides{},
                           static_cast<std::size_t>(params::getInt("TIERCC_ALLREDUCE_ONESHOT_BYTES")));
              expected = sel.choose(req);
            }
            TIERCC_CHECK(ran == expected, what << ": ran " << ran << ", expected " << expected);
            const Plan plan = buildPlan(expected, req, shape);
            if (coll == Collective::AllToAllv) {
              // The counts are the ranks' own: no plan knows them. Pairwise sends each
              // cross-domain byte once, which is the bound the ranks record.
              TIERCC_CHECK(sent == bound, what << ": sent " << sent << " across domains, bound " << bound);
              c.barrier();
              continue;
            }
            TIERCC_CHECK(sent == plan.scaleOutBytes(), what << " (" << expected << "): measured " << sent
                                                            << " slow-tier bytes, the plan says "
                                                            << plan.scaleOutBytes() << "\n"
                                                            << plan.describe());
            if (coll != Collective::Barrier)
              TIERCC_CHECK(bound == plan.boundBytes,
                           what << ": recorded bound " << bound << ", the plan's " << plan.boundBytes);
            c.barrier();
          }
        }
      },
      jo);
  EXPECT_TRUE(result.ok()) << result.report();
}

// Hierarchical allreduce crosses at the bound and spreads it evenly over the rails (each rail
// is one NIC of each domain): max/min per rail <= 1.05, headers aside.
TEST(Planner, HierarchicalAllreduceSpreadsOverRails) {
  JobOptions jo;
  jo.env = {{"TIERCC_TIMEOUT", "60s"}, {"TIERCC_DOMAIN_SIZE", "3"}, {"TIERCC_ALGO", "allreduce:hierarchical"}};
  JobResult result = runRanks(
      6,
      [](int rank, const std::string& store) {
        Communicator c(store, 6, rank);
        std::vector<float> in(3 << 20, 1.0f), out(in.size());
        const TierStats before = c.stats();
        c.allreduce(in.data(), out.data(), in.size(), DataType::F32, ReduceOp::Sum);
        const TierStats after = c.stats();
        std::uint64_t mine[2] = {after.scaleOutBytes - before.scaleOutBytes, static_cast<std::uint64_t>(c.localRank())};
        std::vector<std::uint64_t> all(2 * c.size());
        c.allgather(mine, all.data(), 2, DataType::U64);
        std::vector<std::uint64_t> perRail(3, 0);
        std::uint64_t total = 0;
        for (int r = 0; r < c.size(); ++r) {
          perRail[all[2 * r + 1]] += all[2 * r];
          total += all[2 * r];
        }
        const std::uint64_t bound = 2 * (2 - 1) * in.size() * sizeof(float);
        TIERCC_CHECK(total == bound, "sent " << total << " across domains, bound " << bound);
        const auto [lo, hi] = std::minmax_element(perRail.begin(), perRail.end());
        TIERCC_CHECK(*lo > 0 && double(*hi) / double(*lo) <= 1.05,
                     "rails carried " << perRail[0] << ", " << perRail[1] << ", " << perRail[2] << " bytes");
      },
      jo);
  EXPECT_TRUE(result.ok()) << result.report();
}

TEST(Planner, TwoDomainsOfTwo) { checkTopology(4, {0, 0, 1, 1}); }
TEST(Planner, UnevenThreePlusOne) { checkTopology(4, {0, 0, 0, 1}); }
TEST(Planner, InterleavedDomains) { checkTopology(4, {0, 1, 0, 1}); }
TEST(Planner, OneDomainOfThree) { checkTopology(3, {0, 0, 0}); }

}  // namespace
}  // namespace tiercc::test
