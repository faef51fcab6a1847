// The link model (core/link_model.hpp): its virtual clock on its own, then paced collectives in
// real processes. Timings are checked with generous tolerances (2 shared cores); exact figures
// belong to the benchmarks.
#include <gtest/gtest.h>

#include <cstdlib>
#include <thread>

#include "core/link_model.hpp"
#include "tests/support/multiprocess.hpp"
#include "tiercc/tiercc.hpp"

namespace tiercc {
namespace {

using std::chrono::milliseconds;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

TEST(LinkModel, UnpacedCostsNothing) {
  LinkModel link;
  EXPECT_FALSE(link.paced());
  auto start = Clock::now();
  link.charge(std::size_t(1) << 40);
  EXPECT_LT(secondsSince(start), 0.05);
}

TEST(LinkModel, CostIsLatencyPlusBytesOverBandwidth) {
  LinkModel link(LinkSpec{1e9, 1e-6});
  EXPECT_EQ(std::chrono::duration_cast<std::chrono::microseconds>(link.cost(1000000)).count(), 1001);
  EXPECT_EQ(std::chrono::duration_cast<std::chrono::microseconds>(link.cost(0)).count(), 1);
  EXPECT_EQ(link.spec().describe(), "1 GB/s (8 Gbit/s), 1 us per step");
  EXPECT_EQ(LinkSpec{}.describe(), "not paced");
}

// 10 MB at 100 MB/s: 100 ms.
TEST(LinkModel, ChargeSleepsForBytesOverBandwidth) {
  LinkModel link(LinkSpec{100e6, 0});
  auto start = Clock::now();
  link.charge(10000000);
  const double took = secondsSince(start);
  EXPECT_GE(took, 0.1 * 0.95);
  EXPECT_LT(took, 0.1 * 1.5);
}

// Latency is paid once per charge (one step), also by an empty one.
TEST(LinkModel, LatencyPerCharge) {
  LinkModel link(LinkSpec{0, 5e-3});
  auto start = Clock::now();
  for (int i = 0; i < 10; ++i) link.charge(0);
  const double took = secondsSince(start);
  EXPECT_GE(took, 0.05 * 0.95);
  EXPECT_LT(took, 0.05 * 1.5 + 0.05);
}

// Charges too small to sleep for stay owed and are paid later: 2000 x 10 us = 20 ms in total.
TEST(LinkModel, SmallChargesAddUp) {
  LinkModel link(LinkSpec{100e6, 0});
  auto start = Clock::now();
  for (int i = 0; i < 2000; ++i) link.charge(1000);
  const double took = secondsSince(start);
  EXPECT_GE(took, 0.02 * 0.9);
  EXPECT_LT(took, 0.02 * 1.5 + 0.05);
}

// A step whose real transfer already took the modelled time does not wait again.
TEST(LinkModel, RealTimeSinceTheStepBeganCounts) {
  LinkModel link(LinkSpec{100e6, 0});
  const auto began = Clock::now();
  std::this_thread::sleep_for(milliseconds(100));  // the "real transfer"
  const auto start = Clock::now();
  link.charge(10000000, began);  // 100 ms modelled, all of it overlapped
  EXPECT_LT(secondsSince(start), 0.05);
}

// Credit for time the link sat idle is bounded: after 100 ms idle, 10 MB still take ~100 ms.
TEST(LinkModel, IdleEarnsLittleCredit) {
  LinkModel link(LinkSpec{100e6, 0});
  link.charge(1000);
  std::this_thread::sleep_for(milliseconds(100));
  auto start = Clock::now();
  link.charge(10000000);
  const double took = secondsSince(start);
  EXPECT_GE(took, 0.1 * 0.95);
  EXPECT_LT(took, 0.1 * 1.5);
}

// The link is one resource: two threads charging 5 MB each take 100 ms together.
TEST(LinkModel, ThreadsShareTheLink) {
  LinkModel link(LinkSpec{100e6, 0});
  auto start = Clock::now();
  std::thread other([&] { link.charge(5000000); });
  link.charge(5000000);
  other.join();
  const double took = secondsSince(start);
  EXPECT_GE(took, 0.1 * 0.95);
  EXPECT_LT(took, 0.1 * 1.5 + 0.05);
}

// ---- paced collectives -------------------------------------------------------------------

using test::JobOptions;
using test::JobResult;
using test::runRanks;

constexpr double kPacedBytesPerSec = 100e6;  // "100MB/s" below

// Allreduces 8 MiB of f32 on `ranks` ranks with `env`, and checks, on every rank, that the
// result is right and that the call took at least the modelled time of the bytes this rank
// moved on the paced tier (`scaleOut` picks which), less the model's burst credit of at most
// 1 ms per step (4 steps here, under 5%), and not absurdly more.
void expectPacedAllreduce(int ranks, const std::vector<std::pair<std::string, std::string>>& env, bool scaleOut) {
  JobOptions jo;
  jo.env = env;
  jo.env.push_back({"TIERCC_TIMEOUT", "60s"});
  jo.env.push_back({"TIERCC_DEBUG", "INFO"});
  jo.env.push_back({"TIERCC_DEBUG_SUBSYS", "INIT"});
  JobResult result = runRanks(ranks, [&](int rank, const std::string& store) {
    Communicator comm(store, ranks, rank);
    const std::size_t count = (8u << 20) / 4;
    std::vector<float> in(count, float(rank + 1)), out(count);
    comm.barrier();
    TierStats before = comm.stats();
    auto start = Clock::now();
    comm.allreduce(in.data(), out.data(), count, DataType::F32, ReduceOp::Sum);
    const double took = secondsSince(start);
    TierStats after = comm.stats();
    const float want = float(ranks * (ranks + 1) / 2);
    for (std::size_t i = 0; i < count; ++i) TIERCC_CHECK(out[i] == want, "element " << i << " = " << out[i]);
    const std::uint64_t paced = scaleOut ? after.scaleOutBytes - before.scaleOutBytes
                                         : after.scaleUpBytes - before.scaleUpBytes;
    TIERCC_CHECK(paced >= count * 4 / 2, "only " << paced << " bytes on the paced tier");
    const double modelled = double(paced) / kPacedBytesPerSec;
    std::printf("rank %d: %.1f ms for %llu paced bytes, modelled %.1f ms\n", rank, took * 1e3,
                static_cast<unsigned long long>(paced), modelled * 1e3);
    TIERCC_CHECK(took >= modelled * 0.9, "took " << took * 1e3 << " ms, the model says at least " << modelled * 1e3);
    TIERCC_CHECK(took < modelled * 5 + 5.0, "took " << took * 1e3 << " ms, modelled " << modelled * 1e3);
  }, jo);
  EXPECT_TRUE(result.ok()) << result.report();
  // The configured model is logged at init, with both units.
  for (const auto& r : result.ranks) EXPECT_NE(r.output.find("100 MB/s (800 Mbit/s)"), std::string::npos) << r.output;
}

// 2 domains x 1 rank: each rank sends 8 MiB across (reduce-scatter + allgather halves), ~84 ms.
TEST(LinkModel, PacedScaleOutAllreduce) {
  expectPacedAllreduce(2, {{"TIERCC_DOMAIN_SIZE", "1"}, {"TIERCC_EMU_SCALEOUT_BW", "100MB/s"}}, true);
}

// 1 domain of 2 ranks: each rank reads half of its peer's window to reduce, half to gather.
TEST(LinkModel, PacedScaleUpAllreduce) {
  expectPacedAllreduce(2, {{"TIERCC_DOMAIN_SIZE", "2"}, {"TIERCC_EMU_SCALEUP_BW", "800Mbit/s"}}, false);
}

// A bandwidth without a unit stops the communicator at init, explaining bits vs bytes.
TEST(LinkModel, BareNumberIsRejectedAtInit) {
  JobOptions jo;
  jo.env = {{"TIERCC_EMU_SCALEOUT_BW", "800"}};
  JobResult result = runRanks(1, [](int rank, const std::string& store) {
    try {
      Communicator comm(store, 1, rank);
    } catch (const Error& e) {
      TIERCC_CHECK(e.code() == ErrorCode::InvalidArgument, e.what());
      TIERCC_CHECK(std::string(e.what()).find("800Gb/s (bits") != std::string::npos, e.what());
      return;
    }
    TIERCC_CHECK(false, "a bare bandwidth was accepted");
  }, jo);
  EXPECT_TRUE(result.ok()) << result.report();
}

}  // namespace
}  // namespace tiercc
