// The tier probe (TIERCC_TUNE_PROBE): samples travel exactly, the ranks agree on the medians,
// and probed communicators on several topologies choose alike and compute correctly.
#include <gtest/gtest.h>

#include <cstring>

#include "core/errors.hpp"
#include "runtime/tier_probe.hpp"
#include "tests/support/multiprocess.hpp"
#include "tiercc/tiercc.hpp"

namespace tiercc {
namespace {

using test::JobOptions;
using test::JobResult;
using test::runRanks;

TEST(TierProbe, SamplesTravelExactly) {
  ProbeSample s{1.0 / 3, 123456789.123, std::nullopt};
  ProbeSample back = ProbeSample::decode(s.encode());
  EXPECT_EQ(back.scaleOutLatencySec, s.scaleOutLatencySec);  // bit for bit, not approximately
  EXPECT_EQ(back.scaleOutBytesPerSec, s.scaleOutBytesPerSec);
  EXPECT_FALSE(back.scaleUpBytesPerSec);
  for (const char* bad : {"", "1 2", "0x1p0 0x1p0 0x1p0 0x1p0", "0x1p0 fast 0x1p0", "-0x1p0 - -"})
    EXPECT_THROW(ProbeSample::decode(bad), Error) << "'" << bad << "'";
}

TEST(TierProbe, RanksAgreeOnMediansAndKeepWhatNobodyMeasured) {
  TierModel configured;
  configured.scaleUp = {8e9, 2e-6};
  configured.scaleOut = {1.25e9, 30e-6};
  configured.transportInside = configured.scaleOut;
  std::vector<ProbeSample> samples = {
      {40e-6, 0.5e9, 10e9}, {20e-6, 0.4e9, 12e9}, {30e-6, 0.6e9, 11e9}, {std::nullopt, std::nullopt, 9e9}};
  TierModel m = agreeOnProbes(configured, samples);
  EXPECT_DOUBLE_EQ(m.scaleOut.latencySec, 30e-6);
  EXPECT_DOUBLE_EQ(m.scaleOut.bytesPerSec, 0.5e9);
  EXPECT_DOUBLE_EQ(m.scaleUp.bytesPerSec, 10e9);  // lower middle of four: no averaging
  EXPECT_DOUBLE_EQ(m.scaleUp.latencySec, 2e-6);   // not probed: configured
  EXPECT_DOUBLE_EQ(m.transportInside.bytesPerSec, m.scaleOut.bytesPerSec);
  // One domain: nobody measures the scale-out tier, which keeps its configured figures.
  TierModel one = agreeOnProbes(configured, {{std::nullopt, std::nullopt, 9e9}});
  EXPECT_DOUBLE_EQ(one.scaleOut.bytesPerSec, 1.25e9);
  EXPECT_DOUBLE_EQ(one.scaleOut.latencySec, 30e-6);
}

// Every rank's model description, gathered: they must be identical.
std::vector<std::string> gatherModels(Communicator& c) {
  constexpr std::size_t kLen = 256;
  std::string mine = c.tierModel();
  TIERCC_CHECK(mine.size() < kLen, "model description too long: " << mine);
  std::vector<char> in(kLen, 0), out(kLen * c.size());
  std::memcpy(in.data(), mine.data(), mine.size());
  c.allgather(in.data(), out.data(), kLen, DataType::U8);
  std::vector<std::string> all;
  for (int r = 0; r < c.size(); ++r) all.emplace_back(out.data() + r * kLen);
  return all;
}

void checkProbedJob(int ranks, const std::string& domainSize,
                    const std::vector<std::pair<std::string, std::string>>& extraEnv, const std::string& mustContain) {
  JobOptions jo;
  jo.env = {{"TIERCC_TIMEOUT", "60s"}, {"TIERCC_DOMAIN_SIZE", domainSize}, {"TIERCC_TUNE_PROBE", "on"}};
  jo.env.insert(jo.env.end(), extraEnv.begin(), extraEnv.end());
  JobResult result = runRanks(ranks, [&](int rank, const std::string& store) {
    Communicator c(store, ranks, rank);
    const std::vector<std::string> all = gatherModels(c);
    for (const std::string& m : all) TIERCC_CHECK(m == all[0], "rank " << rank << ": '" << m << "' vs '" << all[0] << "'");
    TIERCC_CHECK(all[0].find("(probed at init)") != std::string::npos, all[0]);
    TIERCC_CHECK(all[0].find(mustContain) != std::string::npos, all[0] << " lacks " << mustContain);
    // What the probe does not measure keeps its configured figure (TIERCC_TUNE_CMA_BW's default).
    TIERCC_CHECK(all[0].find("cross-memory 6.5 GB/s") != std::string::npos, all[0]);
    // A split probes its own tiers; collectives on both choose alike and compute right.
    Communicator half = c.split(rank % 2, rank);
    for (Communicator* comm : {&c, &half}) {
      for (std::size_t count : {std::size_t{1}, std::size_t{1} << 20}) {
        std::vector<float> v(count, static_cast<float>(comm->rank() + 1));
        comm->allreduce(v.data(), v.data(), count, DataType::F32, ReduceOp::Sum);
        const float want = comm->size() * (comm->size() + 1) / 2.0f;
        TIERCC_CHECK(v[0] == want && v[count - 1] == want, "allreduce of " << count << " gave " << v[0]);
      }
    }
    const std::vector<std::string> halves = gatherModels(half);
    for (const std::string& m : halves) TIERCC_CHECK(m == halves[0], "split: '" << m << "' vs '" << halves[0] << "'");
  }, jo);
  EXPECT_TRUE(result.ok()) << result.report();
}

TEST(TierProbe, TwoDomainsOfTwoAgree) { checkProbedJob(4, "2", {}, "scale-out"); }

// The rank beyond the smallest domain has no rail peer: it measures only its domain.
TEST(TierProbe, UnevenDomainsAgree) { checkProbedJob(3, "2", {}, "scale-out"); }

// A paced tier is what the collectives will see: its pacing is kept, not probed.
TEST(TierProbe, PacedTierKeepsItsPacing) {
  checkProbedJob(4, "2", {{"TIERCC_EMU_SCALEOUT_BW", "1GB/s"}, {"TIERCC_EMU_SCALEOUT_LATENCY", "1us"}},
                 "scale-out 1 GB/s (8 Gbit/s), 1 us per step");
}

}  // namespace
}  // namespace tiercc
