// tiercc-sim's model: sizes and units, the network model, the symmetric and exact modes'
// agreement, and the slow-tier bound. Pure computation: no ranks, no timing decides a test.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "plan/cost_model.hpp"
#include "plan/registry.hpp"
#include "sim/network.hpp"
#include "sim/options.hpp"
#include "sim/simulate.hpp"
#include "sim/size.hpp"

namespace tiercc::sim {
namespace {

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

Options parse(std::vector<const char*> args) {
  args.insert(args.begin(), "tiercc-sim");
  bool help = false;
  return parseOptions(static_cast<int>(args.size()), args.data(), help);
}

Cluster small(int domains, int k, double oversub = 1) {
  Cluster c;
  c.gpus = domains * k;
  c.domainSize = k;
  c.scaleUp = {100e9, 1e-6};
  c.scaleOut = {10e9, 5e-6};
  c.oversub = oversub;
  return c;
}

TEST(SimSize, ParsesBinaryAndDecimalUnits) {
  EXPECT_EQ(parseSize("8B", "s"), 8u);
  EXPECT_EQ(parseSize("1GiB", "s"), 1ull << 30);
  EXPECT_EQ(parseSize("64 MiB", "s"), 64ull << 20);
  EXPECT_EQ(parseSize("4KiB", "s"), 4096u);
  EXPECT_EQ(parseSize("1GB", "s"), 1000000000u);
  EXPECT_EQ(parseSize("1kB", "s"), 1000u);
  EXPECT_EQ(parseSize("1.5MiB", "s"), 1572864u);
  EXPECT_EQ(formatSize(1 << 30), "1 GiB");
  EXPECT_EQ(formatSize(8), "8 B");
}

TEST(SimSize, RejectsBareNumbersBitsAndAmbiguousPrefixes) {
  EXPECT_NE(errorOf([] { parseSize("1024", "--bytes"); }).find("needs a unit"), std::string::npos);
  EXPECT_NE(errorOf([] { parseSize("1Gb", "--bytes"); }).find("counts bits"), std::string::npos);
  EXPECT_NE(errorOf([] { parseSize("8Mbit", "--bytes"); }).find("counts bits"), std::string::npos);
  EXPECT_NE(errorOf([] { parseSize("1G", "--bytes"); }).find("binary or decimal"), std::string::npos);
  EXPECT_NE(errorOf([] { parseSize("0.5B", "--bytes"); }).find("whole number"), std::string::npos);
  EXPECT_NE(errorOf([] { parseSize("lots", "--bytes"); }).find("not a size"), std::string::npos);
}

TEST(SimOptions, BandwidthsNeedBitsOrBytes) {
  EXPECT_DOUBLE_EQ(parse({"--preset", "h100-8x400g", "--scaleout", "800Gb/s"}).cluster.scaleOut.bytesPerSec, 100e9);
  EXPECT_DOUBLE_EQ(parse({"--preset", "h100-8x400g", "--scaleout", "800Gbit/s"}).cluster.scaleOut.bytesPerSec, 100e9);
  EXPECT_DOUBLE_EQ(parse({"--preset", "h100-8x400g", "--scaleup", "900GB/s"}).cluster.scaleUp.bytesPerSec, 900e9);
  EXPECT_NE(errorOf([] {
              parse({"--preset", "h100-8x400g", "--scaleout", "800"});
            }).find("needs a unit"),
            std::string::npos);
  EXPECT_NE(errorOf([] {
              parse({"--preset", "h100-8x400g", "--scaleout", "800G/s"});
            }).find("bits or bytes"),
            std::string::npos);
  EXPECT_NE(errorOf([] {
              parse({"--preset", "h100-8x400g", "--scaleout-latency", "5"});
            }).find("unit"),
            std::string::npos);
  EXPECT_NE(errorOf([] { parse({"--gpus", "16"}); }).find("--preset"), std::string::npos);
  EXPECT_NE(errorOf([] { parse({"--preset", "nope"}); }).find("gb300-nvl72-cx8"), std::string::npos);
}

TEST(SimOptions, PresetsCarryTheirFiguresAndOverridesWin) {
  const Options o = parse({"--gpus", "100000", "--preset", "gb300-nvl72-cx8", "--oversub", "2"});
  EXPECT_EQ(o.cluster.gpus, 100000);
  EXPECT_EQ(o.cluster.domainSize, 72);
  EXPECT_DOUBLE_EQ(o.cluster.scaleUp.bytesPerSec, 900e9);
  EXPECT_DOUBLE_EQ(o.cluster.scaleOut.bytesPerSec, 100e9);
  EXPECT_DOUBLE_EQ(o.cluster.oversub, 2);
  EXPECT_DOUBLE_EQ(presetCluster("h100-8x400g").scaleUp.bytesPerSec, 450e9);
  EXPECT_DOUBLE_EQ(presetCluster("gb200-nvl72-cx7").scaleOut.bytesPerSec, 50e9);
  EXPECT_DOUBLE_EQ(presetCluster("rubin-nvl72").scaleUp.bytesPerSec, 1800e9);
  EXPECT_DOUBLE_EQ(presetCluster("rubin-nvl72").scaleOut.bytesPerSec, 200e9);
  const Cluster c = presetCluster("gb300-nvl72-cx8");
  EXPECT_DOUBLE_EQ(c.domainSize * c.scaleUp.bytesPerSec, 64.8e12);  // the rack inside
  EXPECT_DOUBLE_EQ(c.domainSize * c.scaleOut.bytesPerSec, 7.2e12);  // and out
}

TEST(SimNetwork, OneFlowPaysLatencyAndBytesOverItsLink) {
  const Cluster c = small(2, 2);
  const Shape s = c.shape();
  LinkLoads out(s, c);
  out.addFlow(0, 2, 1e9);  // across domains: the NIC
  EXPECT_TRUE(out.crosses());
  EXPECT_DOUBLE_EQ(out.stepSeconds(1), 5e-6 + 0.1);
  EXPECT_DOUBLE_EQ(out.stepSeconds(3), 15e-6 + 0.1);  // latency per latency step
  LinkLoads up(s, c);
  up.addFlow(0, 1, 1e9);  // inside the domain: the scale-up port
  EXPECT_FALSE(up.crosses());
  EXPECT_DOUBLE_EQ(up.stepSeconds(1), 1e-6 + 0.01);
  LinkLoads self(s, c);
  self.addFlow(0, 0, 1e9);
  EXPECT_DOUBLE_EQ(self.stepSeconds(0), 0);
}

TEST(SimNetwork, FlowsShareALinkFairly) {
  const Cluster c = small(2, 2);
  const Shape s = c.shape();
  LinkLoads fanOut(s, c);  // one NIC out, two flows
  fanOut.addFlow(0, 2, 1e9);
  fanOut.addFlow(0, 3, 1e9);
  EXPECT_DOUBLE_EQ(fanOut.bandwidthSeconds(), 0.2);
  LinkLoads fanIn(s, c);  // one NIC in, two flows
  fanIn.addFlow(0, 2, 1e9);
  fanIn.addFlow(1, 2, 1e9);
  EXPECT_DOUBLE_EQ(fanIn.bandwidthSeconds(), 0.2);
  LinkLoads parallel(s, c);  // two rails, one flow each: no sharing
  parallel.addFlow(0, 2, 1e9);
  parallel.addFlow(1, 3, 1e9);
  EXPECT_DOUBLE_EQ(parallel.bandwidthSeconds(), 0.1);
  LinkLoads both(s, c);  // a flow inside and one across: different links
  both.addFlow(0, 1, 1e9);
  both.addFlow(0, 2, 1e9);
  EXPECT_DOUBLE_EQ(both.bandwidthSeconds(), 0.1);
}

TEST(SimNetwork, OversubscribedFabricBindsOnlyWhenEnoughNicsSend) {
  const Cluster c = small(4, 4, 2);  // 16 NICs, the core carries 8 NICs' worth
  const Shape s = c.shape();
  LinkLoads half(s, c), all(s, c);
  for (int r = 0; r < 16; ++r) {
    all.addFlow(r, (r + 4) % 16, 1e9);
    if (r % 2 == 0) half.addFlow(r, (r + 4) % 16, 1e9);
  }
  EXPECT_DOUBLE_EQ(half.bandwidthSeconds(), 0.1);  // 1/2 of the NICs: full speed
  EXPECT_DOUBLE_EQ(all.bandwidthSeconds(), 0.2);   // all of them: half speed each
}

TEST(SimModes, SymmetricIsTheRuntimesCostModelOnANonBlockingFabric) {
  const Cluster c = presetCluster("gb300-nvl72-cx8");
  const Shape s = c.shape();
  for (const char* op : {"allreduce", "allgather", "reduce_scatter", "alltoall", "broadcast", "reduce"}) {
    Options o = parse({"--preset", "gb300-nvl72-cx8", "--op", op});
    const Request req = requestFor(o, 64ull << 20, s);
    for (const AlgorithmEntry* e : algorithmsFor(o.coll)) {
      if (!unsupportedReason(e->algorithm, req, s).empty()) continue;
      const Plan plan = buildPlan(e->algorithm, req, s);
      const std::string algo = toString(e->algorithm);
      EXPECT_DOUBLE_EQ(simulate(plan, s, c, Mode::Symmetric).seconds, price(plan, c.tierModel()).seconds)
          << op << " " << algo;
    }
  }
}

TEST(SimModes, SymmetricAndExactAgreeOnUniformShapes) {
  std::vector<Cluster> clusters = {small(4, 8), small(8, 4), small(3, 4), small(5, 3, 2), small(2, 16)};
  Cluster h100 = presetCluster("h100-8x400g");
  h100.gpus = 64;
  clusters.push_back(h100);
  Cluster nvl = presetCluster("gb200-nvl72-cx7");
  nvl.gpus = 288;
  clusters.push_back(nvl);
  int compared = 0;
  for (const Cluster& c : clusters) {
    const Shape s = c.shape();
    for (const char* op : {"allreduce", "allgather", "reduce_scatter", "alltoall"})
      for (std::uint64_t bytes : {std::uint64_t(1) << 20, std::uint64_t(64) << 20}) {
        Options o = parse({"--preset", "h100-8x400g", "--op", op});
        const Request req = requestFor(o, bytes, s);
        if (req.count == 0) continue;
        for (const AlgorithmEntry* e : algorithmsFor(o.coll)) {
          if (!unsupportedReason(e->algorithm, req, s).empty()) continue;
          const Plan plan = buildPlan(e->algorithm, req, s);
          const std::string algo = toString(e->algorithm);
          const Result sym = simulate(plan, s, c, Mode::Symmetric), ex = simulate(plan, s, c, Mode::Exact);
          const std::string what = std::string(op) + " " + algo + " " + std::to_string(bytes) + " B on " +
                                   std::to_string(s.numDomains()) + "x" + std::to_string(s.maxDomainSize());
          if (algo == "pairwise") {
            // One plan step stands for p - 1 exchanges in sequence; the symmetric price charges
            // each at the slow tier's rate (some rank crosses domains in nearly every one), the
            // exact mode loads all messages at once, so a NIC carries only its (p - k) remote
            // ones and the k - 1 local ones ride the scale-up port alongside: (k - 1) B / NIC
            // bandwidth less, exactly.
            const double B = double(req.count) * 4, k = s.maxDomainSize();
            if (c.oversub == 1) {
              EXPECT_NEAR(sym.seconds - ex.seconds, (k - 1) * B / c.scaleOut.bytesPerSec, 1e-9 * sym.seconds) << what;
            }
            EXPECT_LE(ex.seconds, sym.seconds) << what;
            continue;
          }
          // The exact mode gives each message of a step the step's average, where the plan
          // counts every message exactly (the runtime's bytes) and prices the busiest rank's:
          // they differ by at most a partition's remainder, an element per block of a fragment.
          // So the flows carry the plan's slow-tier bytes to a millionth, and the times agree to
          // a ten-thousandth.
          EXPECT_NEAR(ex.seconds, sym.seconds, 1e-4 * sym.seconds) << what;
          EXPECT_NEAR(ex.scaleOutBytes, sym.scaleOutBytes, 1e-6 * sym.scaleOutBytes + 1e-9) << what;
          ASSERT_EQ(ex.stepSeconds.size(), sym.stepSeconds.size());
          for (std::size_t i = 0; i < ex.stepSeconds.size(); ++i)
            EXPECT_NEAR(ex.stepSeconds[i], sym.stepSeconds[i], 1e-4 * sym.stepSeconds[i] + 1e-15)
                << what << " step " << i;
          ++compared;
        }
      }
  }
  EXPECT_GT(compared, 100);
}

TEST(SimBound, NoHierarchicalAllreduceSendsLessThanTheBound) {
  for (const Preset& preset : presets())
    for (int gpus : {preset.cluster.domainSize * 2, preset.cluster.domainSize * 8, preset.cluster.domainSize * 8 + 5}) {
      Cluster c = preset.cluster;
      c.gpus = gpus;
      const Shape s = c.shape();
      for (std::uint64_t bytes = 1024; bytes <= (1ull << 30); bytes *= 32) {
        Options o = parse({"--preset", preset.name.c_str()});
        const Plan plan = buildPlan(Algorithm::Hierarchical, requestFor(o, bytes, s), s);
        for (Mode mode : {Mode::Symmetric, Mode::Exact}) {
          const Result r = simulate(plan, s, c, mode);
          // Exact mode sums per-message doubles: allow their rounding, nothing more.
          const double bound = double(plan.boundBytes), slack = 1e-12 * bound;
          EXPECT_GE(r.scaleOutBytes, bound - slack) << preset.name << " " << gpus << " " << bytes;
          if (s.uniform()) {
            EXPECT_NEAR(r.scaleOutBytes, bound, slack) << preset.name << " " << bytes;
          }
        }
      }
    }
}

TEST(SimScale, HundredThousandGpusPriceEveryAllreduce) {
  const Options o = parse({"--preset", "gb300-nvl72-cx8", "--gpus", "100000"});
  const Shape s = o.cluster.shape();
  ASSERT_EQ(s.size(), 100000);
  const Request req = requestFor(o, 1ull << 30, s);
  for (const AlgorithmEntry* e : algorithmsFor(Collective::AllReduce)) {
    if (!unsupportedReason(e->algorithm, req, s).empty()) continue;
    const Result r = simulate(buildPlan(e->algorithm, req, s), s, o.cluster, Mode::Symmetric);
    EXPECT_TRUE(std::isfinite(r.seconds) && r.seconds > 0) << toString(e->algorithm);
  }
}

// Deep pipelining at cluster scale (issue 16), priced as tiercc-sim prints it: with the window
// the cost model asks for, a 1 GiB allreduce on 100,000 GPUs runs within 1.2x of its busiest
// tier (the default 4 MiB window left it at 1.8x: the rails' latency outlasted a window's worth
// of scale-up time), and an MoE all-to-all of 8 MiB per GPU on 1,389 NVL72 domains within 1.2x
// of its slow-tier bound.
TEST(SimScale, DeepPipelinesReachTheBusiestTier) {
  struct Case {
    const char* op;
    const char* gpus;
    const char* bytes;
    bool againstBound;
  };
  for (const Case& k : {Case{"allreduce", "100000", "1GiB", false}, Case{"alltoall", "100008", "8MiB", true}}) {
    const Options o = parse({"--preset", "gb300-nvl72-cx8", "--gpus", k.gpus, "--op", k.op});
    const Shape s = o.cluster.shape();
    const Options sized = withWindowFor(o, s);
    EXPECT_GT(sized.windowBytes, kDefaultWindowBytes) << k.op;
    const std::uint64_t bytes = parseSize(k.bytes, "bytes");
    const auto priced = [&](const Options& with) {
      const Plan plan = planFor("auto", requestFor(with, bytes, s), s, with.cluster);
      const Result r = simulate(plan, s, with.cluster, Mode::Symmetric);
      const double limit =
          k.againstBound ? boundSeconds(plan, s, with.cluster) : busiestLinkSeconds(r, plan, s, with.cluster);
      return r.seconds / limit;
    };
    EXPECT_LE(priced(sized), 1.2) << k.op;
    if (!k.againstBound) {
      Options fixed = o;
      fixed.windowBytes = kDefaultWindowBytes;
      EXPECT_GT(priced(fixed), 1.5) << k.op;  // what the default window gave
    }
  }
}

}  // namespace
}  // namespace tiercc::sim
