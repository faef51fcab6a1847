// The hierarchical allreduce and the linear all-to-all across domains, where a domain's ranks
// read each other's buffers (TierStats::scaleUpPath): zero copy on symmetric memory,
// cross-memory attach on ordinary buffers (forced with TIERCC_PATH), staged windows otherwise,
// and a domain of one always staged. Each domain decides alone, so one job mixes them: domains
// of 2, 2 and 1 ranks. Every result is checked exactly, in and out of place, over several
// pipelined rounds, and the slow tier carries the bound.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "tests/support/expect_error.hpp"
#include "tests/support/multiprocess.hpp"
#include "tiercc/tiercc.hpp"

namespace tiercc::test {
namespace {

constexpr int kRanks = 5;
constexpr int kDomainOf[kRanks] = {0, 0, 1, 1, 2};
// Three and a bit pipelined rounds of the default window (2 MiB of f32 per round across domains).
constexpr std::size_t kCount = (std::size_t(6) << 20) / sizeof(float) + 5;

float input(int rank, std::size_t i) { return float((rank + 1) * ((i % 251) + 1)); }

// The exact result at element i: sums and maxima of small integers are exact in f32.
float expected(ReduceOp op, std::size_t i) {
  float sum = 0, max = 0;
  for (int r = 0; r < kRanks; ++r) {
    sum += input(r, i);
    max = std::max(max, input(r, i));
  }
  return op == ReduceOp::Max ? max : sum;
}

// Runs sum and max, out of place and in place, on buffers a and b; checks every element, the
// path every call took, and that the slow tier carried exactly this rank's share of the bound.
void check(Communicator& c, float* a, float* b, const std::string& want, const std::string& kind) {
  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Max}) {
    for (bool inPlace : {false, true}) {
      for (std::size_t i = 0; i < kCount; ++i) a[i] = input(c.rank(), i);
      float* out = inPlace ? a : b;
      const TierStats before = c.stats();
      c.allreduce(a, out, kCount, DataType::F32, op);
      const TierStats after = c.stats();
      const std::string what = kind + (inPlace ? " in place, " : " out of place, ") + toString(op);
      for (std::size_t i = 0; i < kCount; ++i)
        TIERCC_CHECK(out[i] == expected(op, i),
                     what << ": element " << i << " is " << out[i] << ", expected " << expected(op, i));
      TIERCC_CHECK(after.scaleUpPath == want, what << ": took the " << after.scaleUpPath << " path, expected " << want);
      TIERCC_CHECK(after.algorithm == "hierarchical", what << ": ran " << after.algorithm);
      // The smallest domain has one rank: one rail, and the ranks beyond it send nothing across.
      const std::uint64_t sent = after.scaleOutBytes - before.scaleOutBytes;
      if (c.localRank() > 0)
        TIERCC_CHECK(sent == 0, what << ": local rank " << c.localRank() << " has no rail but sent " << sent);
      std::uint64_t total = 0;
      c.allreduce(&sent, &total, 1, DataType::U64, ReduceOp::Sum);
      const std::uint64_t bound = 2 * (c.numDomains() - 1) * kCount * sizeof(float);  // 2(D-1)/D S per domain
      TIERCC_CHECK(total == bound, what << ": " << total << " bytes crossed domains, the bound is " << bound);
    }
  }
}

// A job of kRanks ranks in the domains of kDomainOf, with `env`.
JobOptions inThreeDomains(std::vector<std::pair<std::string, std::string>> env) {
  JobOptions jo;
  jo.timeout = std::chrono::milliseconds(240000);
  jo.env = std::move(env);
  jo.rankEnv = [](int rank) {
    return std::vector<std::pair<std::string, std::string>>{{"TIERCC_DOMAIN_ID", std::to_string(kDomainOf[rank])}};
  };
  return jo;
}

// The job passed, or the test skips where the kernel forbids cross-memory attach, saying so.
void expectPassedWhereCrossMemoryWorks(const JobResult& result) {
  for (const RankResult& r : result.ranks)
    if (!r.ok() && contains(r.output, "cross-memory attach does not work here"))
      GTEST_SKIP() << "the kernel forbids cross-memory attach here:\n" << r.output;
  EXPECT_TRUE(result.ok()) << result.report();
}

TEST(DirectAcrossDomains, EachDomainTakesItsOwnPath) {
  const JobOptions jo = inThreeDomains({{"TIERCC_TIMEOUT", "60s"}, {"TIERCC_ALGO", "allreduce:hierarchical"}});
  JobResult result = runRanks(
      kRanks,
      [](int rank, const std::string& store) {
        Communicator c(store, kRanks, rank);
        TIERCC_CHECK(c.numDomains() == 3, "3 domains expected, got " << c.numDomains());
        const bool alone = c.domainSize() == 1;
        std::vector<float> a(kCount), b(kCount);
        auto* sa = static_cast<float*>(c.allocShared(kCount * sizeof(float)));
        auto* sb = static_cast<float*>(c.allocShared(kCount * sizeof(float)));
        check(c, sa, sb, alone ? "staged" : "zero_copy", "symmetric");

        // Ordinary buffers: cross-memory attach, required (a kernel that forbids it fails the
        // split with a message, and the test skips saying so; a domain of one stays staged).
        // Forced (TIERCC_PATH): the cost model may price staging cheaper on this host.
        setenv("TIERCC_SHM_COPY", "cma", 1);
        setenv("TIERCC_PATH", "cma", 1);
        Communicator cma = c.split(0, rank);
        check(cma, a.data(), b.data(), alone ? "staged" : "cma", "ordinary");

        setenv("TIERCC_PATH", "auto", 1);
        setenv("TIERCC_SHM_COPY", "staged", 1);
        Communicator staged = c.split(0, rank);
        check(staged, a.data(), b.data(), "staged", "ordinary under TIERCC_SHM_COPY=staged");
        c.freeShared(sb);
        c.freeShared(sa);
      },
      jo);
  expectPassedWhereCrossMemoryWorks(result);
}

// The linear all-to-all sends its blocks across whole, whatever fragments each domain's path
// cuts: one domain on cross-memory attach (one fragment), one staged because its ranks call in
// place (fragments of a small window), one of a single rank (staged): every block checked, and
// each domain's path, and the slow tier carries every cross-domain block once.
TEST(DirectAcrossDomains, LinearAllToAllAcrossDomainsOnDifferentPaths) {
  constexpr std::size_t kBlock = 3001;  // elements per block: several fragments of the window
  const JobOptions jo = inThreeDomains({{"TIERCC_TIMEOUT", "60s"},
                                        {"TIERCC_ALGO", "alltoall:linear"},
                                        {"TIERCC_SHM_COPY", "cma"},
                                        {"TIERCC_PATH", "cma"},
                                        {"TIERCC_SHM_CHUNK", "16384"}});
  JobResult result = runRanks(
      kRanks,
      [](int rank, const std::string& store) {
        Communicator c(store, kRanks, rank);
        auto value = [](int from, int to, std::size_t i) { return float(from * 100000 + to * 1000 + int(i % 997)); };
        for (int inPlaceDomain : {-1, 1, 0}) {  // none in place, domain 1's ranks, domain 0's
          const bool inPlace = c.domain() == inPlaceDomain;
          std::vector<float> a(kBlock * kRanks), b(kBlock * kRanks, -1.0f);
          for (int to = 0; to < kRanks; ++to)
            for (std::size_t i = 0; i < kBlock; ++i) a[to * kBlock + i] = value(rank, to, i);
          float* out = inPlace ? a.data() : b.data();
          const TierStats before = c.stats();
          c.alltoall(a.data(), out, kBlock, DataType::F32);
          const TierStats after = c.stats();
          const std::string what = "domain " + std::to_string(inPlaceDomain) + " in place";
          for (int from = 0; from < kRanks; ++from)
            for (std::size_t i = 0; i < kBlock; ++i)
              TIERCC_CHECK(out[from * kBlock + i] == value(from, rank, i), what << ": block from rank " << from
                                                                                << ", element " << i << " is "
                                                                                << out[from * kBlock + i]);
          const std::string want = c.domainSize() == 1 || inPlace ? "staged" : "cma";
          TIERCC_CHECK(after.algorithm == "linear", what << ": ran " << after.algorithm);
          TIERCC_CHECK(after.scaleUpPath == want, what << ": took " << after.scaleUpPath << ", expected " << want);
          const std::uint64_t sent = after.scaleOutBytes - before.scaleOutBytes;
          const std::uint64_t mine = (kRanks - c.domainSize()) * kBlock * sizeof(float);
          TIERCC_CHECK(sent == mine,
                       what << ": sent " << sent << " bytes across, its blocks for other domains are " << mine);
        }
      },
      jo);
  expectPassedWhereCrossMemoryWorks(result);
}

}  // namespace
}  // namespace tiercc::test
