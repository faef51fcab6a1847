// Plans, the cost model and the selector, as pure functions: no ranks, no network.
#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "plan/cost_model.hpp"
#include "plan/pipeline_depth.hpp"
#include "plan/registry.hpp"
#include "plan/selector.hpp"
#include "plan/topology.hpp"
#include "plan/window_size.hpp"
#include "tests/support/plan_models.hpp"

namespace tiercc {
namespace {

// Every shape the issue names: D in 1..4, k in 1..4, and uneven domains.
std::vector<Shape> shapes() {
  std::vector<Shape> out;
  for (int d = 1; d <= 4; ++d)
    for (int k = 1; k <= 4; ++k) out.push_back(Shape::uniformDomains(d, k));
  for (std::vector<int> sizes : std::vector<std::vector<int>>{{3, 1}, {2, 2, 1}, {4, 3}, {1, 4, 2, 3}}) {
    Shape s;
    s.domainSizes = sizes;
    for (int d = 0; d < static_cast<int>(sizes.size()); ++d) s.domainOf.insert(s.domainOf.end(), sizes[d], d);
    out.push_back(s);
  }
  return out;
}

std::string name(const Shape& s) {
  std::string out;
  for (int k : s.domainSizes) out += (out.empty() ? "" : "+") + std::to_string(k);
  return out;
}

TEST(Plan, NoPlanSendsFewerSlowTierBytesThanTheBound) {
  for (const Shape& s : shapes())
    for (int c = 0; c < kNumCollectives; ++c) {
      const Request req = request(static_cast<Collective>(c), 12 * 5 * 7 * 1024);  // divisible by every size here
      if (req.coll == Collective::Send || req.coll == Collective::Recv) continue;
      for (const AlgorithmEntry* e : algorithmsFor(req.coll)) {
        if (!unsupportedReason(e->algorithm, req, s).empty()) continue;
        const Plan p = buildPlan(e->algorithm, req, s);
        const char* algo = toString(e->algorithm);
        EXPECT_GE(p.scaleOutBytes(), p.boundBytes) << toString(req.coll) << ":" << algo << " on " << name(s);
        if (s.numDomains() == 1) {
          EXPECT_EQ(p.scaleOutBytes(), 0u) << toString(req.coll) << ":" << algo << " on " << name(s);
        }
      }
    }
}

TEST(Plan, HierarchicalIsAtTheBound) {
  for (const Shape& s : shapes())
    for (Collective c : {Collective::AllReduce, Collective::ReduceScatter, Collective::AllGather, Collective::Broadcast,
                         Collective::Reduce, Collective::AllToAll}) {
      const Request req = request(c, 12 * 5 * 7 * 1024);
      const Plan p = buildPlan(Algorithm::Hierarchical, req, s);
      EXPECT_EQ(p.scaleOutBytes(), p.boundBytes) << toString(c) << " on " << name(s);
    }
}

TEST(Plan, FlatRingCrossesMoreThanTheBound) {
  // 2 domains x 2: the ring 0-1-2-3 crosses twice, each crossing carrying 2 (p-1)/p S.
  const Shape s = Shape::uniformDomains(2, 2);
  const Request req = request(Collective::AllReduce, 1 << 20);
  const Plan ring = buildPlan(Algorithm::Ring, req, s), hier = buildPlan(Algorithm::Hierarchical, req, s);
  const std::uint64_t S = 4u << 20;
  EXPECT_EQ(ring.scaleOutBytes(), 2 * (2 * 3 * S / 4));
  EXPECT_EQ(hier.scaleOutBytes(), 2 * S);  // 2 (D-1) S summed over ranks
  EXPECT_EQ(hier.boundBytes, 2 * S);
  EXPECT_GT(ring.scaleOutBytes(), hier.scaleOutBytes());
}

TEST(Plan, BoundsFollowTheirFormulas) {
  const Shape s = Shape::uniformDomains(3, 4);  // N = 12
  const std::uint64_t B = 4 * 100;
  EXPECT_EQ(slowTierBound(request(Collective::AllReduce, 100), s), 2 * 2 * B);
  EXPECT_EQ(slowTierBound(request(Collective::AllGather, 100), s), 2 * 12 * B);
  EXPECT_EQ(slowTierBound(request(Collective::ReduceScatter, 100), s), 2 * 12 * B);
  EXPECT_EQ(slowTierBound(request(Collective::Broadcast, 100), s), 2 * B);
  EXPECT_EQ(slowTierBound(request(Collective::Reduce, 100), s), 2 * B);
  EXPECT_EQ(slowTierBound(request(Collective::AllToAll, 100), s), 12 * 8 * B);
}

TEST(Plan, OneRankMovesNothingAcrossAnyTier) {
  for (int c = 0; c < kNumCollectives; ++c) {
    const Request req = request(static_cast<Collective>(c), 1000);
    if (req.coll == Collective::Send || req.coll == Collective::Recv) continue;
    for (const AlgorithmEntry* e : algorithmsFor(req.coll)) {
      const Plan p = buildPlan(e->algorithm, req, Shape::uniformDomains(1, 1));
      EXPECT_EQ(p.scaleOutBytes() + p.scaleUpBytes(), 0u) << toString(req.coll) << ":" << toString(e->algorithm);
    }
  }
}

TEST(Plan, OneShotNeedsUniformDomainsAndAWindow) {
  Shape uneven;
  uneven.domainSizes = {3, 1};
  uneven.domainOf = {0, 0, 0, 1};
  EXPECT_NE(unsupportedReason(Algorithm::OneShot, request(Collective::AllReduce, 16), uneven), "");
  Request big = request(Collective::AllReduce, 1 << 20);
  big.windowBytes = 1 << 20;
  EXPECT_NE(unsupportedReason(Algorithm::OneShot, big, Shape::uniformDomains(2, 2)), "");
  EXPECT_EQ(unsupportedReason(Algorithm::OneShot, request(Collective::AllReduce, 16), Shape::uniformDomains(2, 2)), "");
  EXPECT_NE(unknownAlgorithmReason(Collective::AllReduce, "bogus").find("ring"), std::string::npos);
  EXPECT_NE(unsupportedReason(Algorithm::Bruck, request(Collective::AllReduce, 16), uneven), "");
}

TEST(CostModel, PricesLatencyAndBandwidthPerStep) {
  TierModel m;
  m.scaleUp = {10e9, 1e-6};
  m.scaleOut = {1e9, 10e-6};
  m.transportInside = m.scaleOut;
  Plan p;
  Step up;
  up.tier = Tier::ScaleUp;
  up.overTransport = false;
  up.latencySteps = 2;
  up.busiestBytes = 10e6;
  Step out;
  out.tier = Tier::ScaleOut;
  out.latencySteps = 3;
  out.busiestBytes = 1e6;
  p.steps = {up, out};
  const Price price = tiercc::price(p, m);
  ASSERT_EQ(price.stepSeconds.size(), 2u);
  EXPECT_NEAR(price.stepSeconds[0], 2e-6 + 1e-3, 1e-12);
  EXPECT_NEAR(price.stepSeconds[1], 30e-6 + 1e-3, 1e-12);
  EXPECT_NEAR(price.seconds, price.stepSeconds[0] + price.stepSeconds[1], 1e-12);
  // The same bytes inside a domain but over the transport pay the transport's price.
  up.overTransport = true;
  p.steps = {up};
  EXPECT_NEAR(tiercc::price(p, m).seconds, 20e-6 + 10e-3, 1e-12);
}

TEST(CostModel, PipelinedPlansOverlapTheTiers) {
  Plan p;
  Step up, out, afterOut;
  up.tier = afterOut.tier = Tier::ScaleUp;
  out.tier = Tier::ScaleOut;
  afterOut.after = 1u << 1;  // waits for the scale-out step
  p.steps = {up, out, afterOut};
  p.fragments = 4;
  // Sequential: the sum. Pipelined over 4 fragments: the busier tier (out, 6 s) plus a quarter
  // of the other (up, 1 + 3 s) for filling and draining the pipeline.
  EXPECT_DOUBLE_EQ(p.combine({1, 6, 3}), 10);
  // A scale-up step that does not wait for the scale-out one before it runs under its transfers.
  p.steps = {up, out, up};
  EXPECT_DOUBLE_EQ(p.combine({1, 6, 3}), 1 + 6);
  p.steps = {up, out, afterOut};
  p.slots = 2;
  EXPECT_DOUBLE_EQ(p.combine({1, 6, 3}), 6 + 4.0 / 4);
  EXPECT_DOUBLE_EQ(p.combine({5, 1, 5}), 10 + 1.0 / 4);

  // Latency in flight (a posted rail step's) is hidden by the slots: per fragment up 1, out 1,
  // in flight 4: a trip of 6; with 2 slots a fragment leaves every 3, with 8 every 1 (the tiers).
  p.steps = {up, out};
  p.fragments = 10;
  EXPECT_DOUBLE_EQ(p.combine({10, 50}, {0, 40}), 9 * 3.0 + 6);
  p.slots = 8;
  EXPECT_DOUBLE_EQ(p.combine({10, 50}, {0, 40}), 9 * 1.0 + 6);
  p.slots = 1;
  EXPECT_DOUBLE_EQ(p.combine({10, 50}, {0, 40}), 60);
  p.slots = 2;

  // Across domains every hierarchical collective runs half-window fragments, two in flight.
  Request r = request(Collective::AllReduce, 64u << 20);  // 256 MiB of f32
  r.windowBytes = 4u << 20;
  const Plan across = buildPlan(Algorithm::Hierarchical, r, Shape::uniformDomains(2, 4));
  EXPECT_EQ(across.slots, 2u);
  EXPECT_EQ(across.fragments, 128u);
  EXPECT_EQ(buildPlan(Algorithm::Hierarchical, r, Shape::uniformDomains(1, 4)).slots, 1u);
  EXPECT_EQ(buildPlan(Algorithm::Ring, r, Shape::uniformDomains(2, 4)).slots, 1u);
  for (Collective c : {Collective::ReduceScatter, Collective::AllGather, Collective::Broadcast, Collective::Reduce,
                       Collective::AllToAll}) {
    const Plan plan = buildPlan(Algorithm::Hierarchical, request(c, 4u << 20), Shape::uniformDomains(2, 2));
    EXPECT_EQ(plan.slots, 2u) << toString(c);
    EXPECT_GT(plan.fragments, 1u) << toString(c);
  }
}

TEST(Selector, PicksByPrice) {
  // Uniform domains: the cheapest large plans are those that cross the slow tier at the bound
  // (on contiguous power-of-two domains halving-doubling is one of them: its far steps carry
  // the smallest halves; pairwise all-to-all sends each cross-domain block once). On uneven
  // domains a plan above the bound may be faster, by using more links than the rails.
  for (const Shape& s : {Shape::uniformDomains(2, 4), Shape::uniformDomains(4, 8), Shape::uniformDomains(3, 3)}) {
    Selector sel(s, clusterLike(), AlgoOverrides{}, 16384);
    EXPECT_EQ(sel.decide(request(Collective::AllReduce, 4)), Algorithm::OneShot) << name(s);  // latency wins
    for (Collective c : {Collective::AllReduce, Collective::AllToAll, Collective::AllGather}) {
      const Request big = request(c, 16 << 20);
      const Plan& chosen = sel.choose(big).staged();
      const char* algo = toString(chosen.algorithm);
      EXPECT_EQ(chosen.scaleOutBytes(), chosen.boundBytes) << toString(c) << " on " << name(s) << ": " << algo;
      EXPECT_NE(chosen.algorithm, Algorithm::Ring) << toString(c) << " on " << name(s);
    }
  }
}

// A selector for one domain of 4 ranks with the runtime's defaults (ordinary buffers, no
// cross-memory attach).
Selector oneDomainOfFour(const TierModel& m) {
  RankView view;
  view.domainSize = 4;
  return Selector(Shape::uniformDomains(1, 4), m, AlgoOverrides{}, 16384, view);
}

// Inside one domain small allgathers and all-to-alls take the one-shot plan: one wait on the
// peers' inputs, where the hierarchical staged round also waits for its window's release. With
// one domain an algorithm is priced on the cheapest path the domain may take, so symmetric
// buffers keep the hierarchical plan's zero copy once copying the input costs more than a wait.
TEST(Selector, OneShotGathersInsideOneDomain) {
  const TierModel m = runtimeDefaults();
  const Shape one = Shape::uniformDomains(1, 4);
  Selector sel = oneDomainOfFour(m);
  for (Collective c : {Collective::AllGather, Collective::AllToAll, Collective::ReduceScatter}) {
    EXPECT_EQ(sel.decide(request(c, 2)), Algorithm::OneShot) << toString(c);
    const Plan plan = buildPlan(Algorithm::OneShot, request(c, 2), one);
    ASSERT_EQ(plan.steps.size(), 1u);
    EXPECT_EQ(plan.steps[0].latencySteps, 1);  // alternating halves: no wait for the release
    EXPECT_LT(price(plan, m).seconds, price(buildPlan(Algorithm::Hierarchical, request(c, 2), one), m).seconds);
    // Symmetric buffers: zero copy from a few KiB (the input copy costs more than a wait).
    EXPECT_EQ(sel.decide(request(c, 2), true), Algorithm::OneShot) << toString(c);
    EXPECT_EQ(sel.decide(request(c, 64 << 10), true), Algorithm::Hierarchical) << toString(c);
    // Across domains the rails carry each block once: one_shot does not plan it.
    EXPECT_NE(unsupportedReason(Algorithm::OneShot, request(c, 2), Shape::uniformDomains(2, 2)), "");
  }
  // An all-to-all stages all its blocks: it must fit the window.
  Request big = request(Collective::AllToAll, 1 << 20);  // 4 MiB per peer, 16 MiB in all
  EXPECT_NE(unsupportedReason(Algorithm::OneShot, big, one), "");
}

TEST(Selector, OneShotLimitIsAnUpperBound) {
  Selector sel(Shape::uniformDomains(2, 4), clusterLike(), AlgoOverrides{}, 0);
  EXPECT_NE(sel.decide(request(Collective::AllReduce, 4)), Algorithm::OneShot);
}

TEST(Selector, OverridesWinAndCannotBeSilentlyIgnored) {
  AlgoOverrides o = parseAlgoOverrides("allreduce:ring,alltoall:bruck,broadcast:auto");
  EXPECT_EQ(o[static_cast<int>(Collective::AllReduce)], Algorithm::Ring);
  EXPECT_EQ(o[static_cast<int>(Collective::AllToAll)], Algorithm::Bruck);
  EXPECT_FALSE(o[static_cast<int>(Collective::Broadcast)].has_value());
  Selector sel(Shape::uniformDomains(2, 4), clusterLike(), o, 16384);
  EXPECT_EQ(sel.decide(request(Collective::AllReduce, 64 << 20)), Algorithm::Ring);
  EXPECT_EQ(sel.choose(request(Collective::AllToAll, 1 << 20)).algorithm, Algorithm::Bruck);
  // Forced one_shot on uneven domains is an error that says why, not a fallback.
  Shape uneven;
  uneven.domainSizes = {3, 1};
  uneven.domainOf = {0, 0, 0, 1};
  Selector forced(uneven, clusterLike(), parseAlgoOverrides("allreduce:one_shot"), 16384);
  try {
    forced.choose(request(Collective::AllReduce, 4));
    FAIL() << "expected NotSupported";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::NotSupported);
    EXPECT_NE(std::string(e.what()).find("equal size"), std::string::npos) << e.what();
  }
}

TEST(Selector, BadOverridesAreClearErrors) {
  for (const char* bad : {"allreduce", "allreduce:bogus", "allreduc:ring", "allgather:halving_doubling"}) {
    try {
      parseAlgoOverrides(bad);
      FAIL() << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::InvalidArgument) << bad;
      EXPECT_NE(std::string(e.what()).find("TIERCC_ALGO"), std::string::npos) << e.what();
    }
  }
}

// A small broadcast inside one domain is one copy of the root's staged vector by each peer (a
// reduce, the root's reads of its peers' inputs), with no wait for the window's release:
// one_shot, cheaper than the hierarchical plan's two waits.
TEST(Selector, OneShotRootedInsideOneDomain) {
  const Shape one = Shape::uniformDomains(1, 4);
  Selector sel = oneDomainOfFour(runtimeDefaults());
  const Request small = request(Collective::Broadcast, 2);  // 8 B
  EXPECT_EQ(sel.decide(small), Algorithm::OneShot);
  const Plan plan = buildPlan(Algorithm::OneShot, small, one);
  ASSERT_EQ(plan.steps.size(), 1u);
  EXPECT_EQ(plan.steps[0].latencySteps, 1);
  EXPECT_EQ(plan.scaleUpBytes(), 3u * 8);  // each of the 3 peers copies the 8 B
  EXPECT_NE(unsupportedReason(Algorithm::OneShot, small, Shape::uniformDomains(2, 2)), "");
  EXPECT_NE(unsupportedReason(Algorithm::OneShot, request(Collective::Broadcast, 1 << 20), one), "");  // 4 MiB
  // A reduce the same way round: the others stage, the root reads them all.
  EXPECT_EQ(sel.decide(request(Collective::Reduce, 2)), Algorithm::OneShot);
  EXPECT_EQ(buildPlan(Algorithm::OneShot, request(Collective::Reduce, 2), one).scaleUpBytes(), 3u * 8);
}

// Inside one host's memory a fragment that a rank stages for its peers stays in its core's
// cache while they read it if it fits: those reads run at the local rate. Beyond, they cross
// between the cores' caches at the scale-up rate, and with copies in pieces (core/copy.hpp)
// staging beats cross-memory attach for every collective at the runtime's figures: an
// allgather or a broadcast stages one block, an all-to-all only the blocks its peers read (not
// its own), and an allreduce's or a reduce-scatter's cross-memory plan reads its peers' data into
// scratch before reducing it, as many copies as staging. Where copies through the domain are
// slower (the old scale-up default), the all-to-all's two copies of each block lose to the
// kernel's one unless the cache takes the second. Measured: docs/performance.md, "Copies in
// pieces" and "Hierarchical all-to-all without packing".
TEST(Selector, CrossMemoryWhereStagingWouldCopyEveryBlockTwice) {
  const TierModel m = runtimeDefaults();
  TierModel noCache = m;
  noCache.cacheBytes = 0;
  const Shape one = Shape::uniformDomains(1, 2);
  // The cache term: the same staged plan is cheaper where its reads fit, the same where not.
  const Plan small = buildPlan(Algorithm::Hierarchical, request(Collective::Broadcast, 64 << 10), one);
  const Plan large = buildPlan(Algorithm::Hierarchical, request(Collective::Broadcast, 1 << 20), one);
  EXPECT_TRUE(peerReadsCached(small, m));
  EXPECT_FALSE(peerReadsCached(small, noCache));
  EXPECT_FALSE(peerReadsCached(large, m));
  EXPECT_LT(price(small, m).seconds, price(small, noCache).seconds);
  EXPECT_DOUBLE_EQ(price(large, m).seconds, price(large, noCache).seconds);
  // Cross-memory reads are not plain loads of staged data: the cache does not price them.
  const Plan cma = buildPlan(Algorithm::Hierarchical, request(Collective::Broadcast, 64 << 10), one, Path::CrossMemory);
  EXPECT_DOUBLE_EQ(price(cma, m).seconds, price(cma, noCache).seconds);

  RankView view;
  view.domainSize = 2;
  view.crossMemory = true;
  Selector sel(one, m, AlgoOverrides{}, 16384, view);
  for (std::size_t count = 16 << 10; count <= std::size_t{16} << 20; count *= 4) {  // 64 KiB to 64 MiB per rank
    for (Collective c : {Collective::AllGather, Collective::AllReduce, Collective::ReduceScatter, Collective::Broadcast,
                         Collective::AllToAll}) {
      const Choice& choice = sel.choose(request(c, count));
      EXPECT_EQ(choice.plans.front().path, Path::Staged) << toString(c) << " of " << count << " elements";
    }
  }
  // Where the scale-up rate is the old default's (before copies in pieces), large ordinary
  // buffers go through the kernel: the choice follows the model, not a threshold. There the
  // cache decides an all-to-all of 256 KiB blocks: its peers' reads of what a rank staged fit,
  // and it stays staged; priced without the cache, it would go through the kernel.
  TierModel slowCopies = m;
  slowCopies.scaleUp.bytesPerSec = 8e9;
  Selector before(one, slowCopies, AlgoOverrides{}, 16384, view);
  EXPECT_EQ(before.choose(request(Collective::AllGather, 2 << 20)).plans.front().path, Path::CrossMemory);
  EXPECT_EQ(before.choose(request(Collective::AllGather, 16 << 10)).plans.front().path, Path::Staged);
  const Request mid = request(Collective::AllToAll, 64 << 10);
  EXPECT_EQ(before.choose(mid).plans.front().path, Path::Staged);
  TierModel slowBlind = slowCopies;
  slowBlind.cacheBytes = 0;
  Selector blind(one, slowBlind, AlgoOverrides{}, 16384, view);
  EXPECT_EQ(blind.choose(mid).plans.front().path, Path::CrossMemory);
}

// Staged, a rank copies into its window only what another rank reads (exec/domain_steps.cpp):
// the price of the Stage step is that, and no step packs or copies back what a rank keeps.
TEST(Planner, StagedPlansCopyOnlyWhatAnotherRankReads) {
  const Shape s = Shape::uniformDomains(2, 2);
  const std::size_t count = 1 << 16;
  const double B = count * 4.0;  // a block of f32 (all-to-all, reduce-scatter), or the vector
  auto kinds = [](const Plan& p) {
    std::vector<StepKind> out;
    for (const Step& st : p.steps) out.push_back(st.kind);
    return out;
  };
  // All-to-all: a rank stages its block for its domain peer and the one the other rail carries
  // across, not its own nor the one it sends itself; arrivals for it land in its receive buffer.
  const Plan a2a = buildPlan(Algorithm::Hierarchical, request(Collective::AllToAll, count), s);
  EXPECT_EQ(kinds(a2a),
            (std::vector<StepKind>{StepKind::Stage, StepKind::RailCopy, StepKind::Publish, StepKind::DomainGather}));
  EXPECT_DOUBLE_EQ(a2a.steps[0].localBytes, 2 * B);
  EXPECT_EQ(a2a.steps[1].out, Buffer::Recv);
  EXPECT_DOUBLE_EQ(a2a.steps[3].busiestBytes, B);  // from its domain peer's window only
  // A rank beyond the rails (3 + 1: one rail) sends nothing across itself: it stages every
  // block but its own.
  const Shape uneven = shapeOf(Topology::fromDomainKeys({0, 0, 0, 1}, 0));
  EXPECT_DOUBLE_EQ(buildPlan(Algorithm::Hierarchical, request(Collective::AllToAll, count), uneven).steps[0].localBytes,
                   3 * B);
  // Allreduce: every slice but the one a rank reduces, into its receive buffer, where the rail
  // steps run; the publish copies it into the window.
  const Plan ar = buildPlan(Algorithm::Hierarchical, request(Collective::AllReduce, count), s);
  EXPECT_DOUBLE_EQ(ar.steps[0].localBytes, B / 2);
  for (const Step& st : ar.steps) {
    if (st.kind == StepKind::DomainReduce || st.tier == Tier::ScaleOut) {
      EXPECT_EQ(st.out, Buffer::Recv) << toString(st.kind);
    }
    if (st.kind == StepKind::Publish) {
      EXPECT_EQ(st.in, Buffer::Recv);
    }
  }
  // Reduce-scatter: every block but the two this rank's rail reduces (one per domain).
  const Plan rs = buildPlan(Algorithm::Hierarchical, request(Collective::ReduceScatter, count), s);
  EXPECT_DOUBLE_EQ(rs.steps[0].localBytes, 2 * B);
}

// All-to-all across domains: the linear plan sends each block straight from buffer to buffer
// (nothing staged for another rank to send), whole, once per call, at the price of N - k
// messages per rank where a hierarchical rail member sends its blocks per fragment, and copies
// inside its domain while its blocks across are on the wire. With the runtime's defaults on 2
// domains of 2 the cost model prices it within 0.2% of the hierarchical plan for large blocks
// (which, since it no longer packs, copies only the blocks another rail sends) and above it for
// small ones, and on many domains above. It runs only where TIERCC_ALGO asks (what decides on a
// socket transport, its CPU and the flows sharing a link, the model does not price); there,
// where the links limit, its cross-memory plan costs what its staged one does and copies less:
// it is taken.
TEST(Selector, LinearAllToAllSendsEveryBlockStraightAcross) {
  const Shape s = Shape::uniformDomains(2, 2);
  for (std::size_t count : {std::size_t(1), std::size_t(1000), std::size_t(1) << 20}) {
    for (Path path : {Path::Staged, Path::CrossMemory}) {
      const Plan linear = buildPlan(Algorithm::Linear, request(Collective::AllToAll, count), s, path);
      EXPECT_EQ(linear.scaleOutBytes(), linear.boundBytes) << count;
      EXPECT_EQ(linear.scaleUpBytes(), 4 * count * 4) << count;  // every rank reads its one peer's block
      std::vector<StepKind> kinds;
      for (const Step& st : linear.steps) kinds.push_back(st.kind);
      const std::vector<StepKind> want =
          path == Path::Staged ? std::vector<StepKind>{StepKind::CrossExchange, StepKind::Stage, StepKind::DomainGather}
                               : std::vector<StepKind>{StepKind::CrossExchange, StepKind::Agree, StepKind::DomainGather,
                                                       StepKind::Close};
      EXPECT_EQ(kinds, want) << toString(path);
      EXPECT_TRUE(linear.steps[0].perCall);       // whole blocks, whatever fragments the path cuts
      EXPECT_EQ(linear.steps[2].after, 1u << 1);  // the gather waits for its own domain, not the blocks across
    }
  }
  // One domain: nothing crosses, the same plan as the hierarchical one, which wins the tie.
  const TierModel m = runtimeDefaults();
  const Shape one = Shape::uniformDomains(1, 4);
  const Request inside = request(Collective::AllToAll, 1 << 18);
  EXPECT_DOUBLE_EQ(price(buildPlan(Algorithm::Linear, inside, one), m).seconds,
                   price(buildPlan(Algorithm::Hierarchical, inside, one), m).seconds);
  EXPECT_EQ(oneDomainOfFour(m).decide(inside), Algorithm::Hierarchical);

  auto seconds = [&](Algorithm a, const Request& r, const Shape& shape, Path path) {
    const Plan staged = buildAtBestDepth(a, r, shape, m);
    return price(path == Path::Staged ? staged : buildPlan(a, atDepthOf(staged, r), shape, path), m).seconds;
  };
  const Request big = request(Collective::AllToAll, 1 << 20), small = request(Collective::AllToAll, 64);
  EXPECT_NEAR(seconds(Algorithm::Linear, big, s, Path::CrossMemory),
              seconds(Algorithm::Hierarchical, big, s, Path::Staged),
              0.002 * seconds(Algorithm::Hierarchical, big, s, Path::Staged));
  EXPECT_GT(seconds(Algorithm::Linear, small, s, Path::CrossMemory),
            seconds(Algorithm::Hierarchical, small, s, Path::Staged));
  const Shape many = Shape::uniformDomains(16, 4);
  EXPECT_GT(seconds(Algorithm::Linear, big, many, Path::CrossMemory),
            seconds(Algorithm::Hierarchical, big, many, Path::Staged));

  RankView view;
  view.domainSize = 2;
  view.crossMemory = true;
  EXPECT_EQ(Selector(s, m, AlgoOverrides{}, 16384, view).decide(big), Algorithm::Hierarchical);  // not asked
  AlgoOverrides asked{};
  asked[static_cast<int>(Collective::AllToAll)] = Algorithm::Linear;
  Selector sel(s, m, asked, 16384, view);
  const Choice& chosen = sel.choose(big);  // 4 MiB blocks
  EXPECT_EQ(chosen.algorithm, Algorithm::Linear);
  ASSERT_EQ(chosen.plans.size(), 2u);
  EXPECT_EQ(chosen.plans.front().path, Path::CrossMemory);
  EXPECT_EQ(chosen.plans.back().path, Path::Staged);  // in place, or where a domain cannot attach
  EXPECT_EQ(chosen.plans.front().fragments, 1u);
  EXPECT_GT(chosen.plans.back().fragments, 1u);  // fragments of its own: the messages across are whole blocks
}

}  // namespace
}  // namespace tiercc
