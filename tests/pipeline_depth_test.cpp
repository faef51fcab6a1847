// How deep plans pipeline and how large a window the cost model asks for, as pure functions.
#include "plan/pipeline_depth.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "plan/cost_model.hpp"
#include "plan/registry.hpp"
#include "plan/selector.hpp"
#include "plan/topology.hpp"
#include "plan/window_size.hpp"
#include "tests/support/plan_models.hpp"

namespace tiercc {
namespace {

// The depth comes from the cost model: the cheapest of 2, 4 and 8 fragments in flight. With a
// fixed window more slots cut smaller fragments, so the bytes in flight stay one window: deeper
// pays where it shortens filling and draining. Every path of a call cuts the same fragments; a
// depth asked for (TIERCC_PIPELINE_SLOTS) is taken as is.
TEST(Selector, PipelineDepthFromTheCostModel) {
  const TierModel m = clusterLike();
  const Shape s = Shape::uniformDomains(2, 4);
  RankView view;
  view.domainSize = 4;
  view.crossMemory = true;
  view.forced = Path::CrossMemory;
  Selector sel(s, m, parseAlgoOverrides("allreduce:hierarchical"), 0, view);
  Request r = request(Collective::AllReduce, 16u << 20);  // 64 MiB of f32
  const Choice& choice = sel.choose(r);
  const Plan& staged = choice.staged();
  ASSERT_EQ(staged.algorithm, Algorithm::Hierarchical);
  EXPECT_EQ(staged.slots, 4u);  // 2: 32 fragments; 4: 64, each half as long to fill and drain
  for (std::uint32_t slots : {2u, 4u, 8u}) {
    Request at = r;
    at.slots = slots;
    EXPECT_LE(staged.predictedSeconds, price(buildPlan(Algorithm::Hierarchical, at, s), m).seconds) << slots;
  }
  ASSERT_EQ(choice.plans.size(), 2u);
  EXPECT_EQ(choice.plans[0].path, Path::CrossMemory);
  EXPECT_EQ(choice.plans[0].slots, staged.slots);
  EXPECT_EQ(choice.plans[0].fragmentCount, staged.fragmentCount);

  r.slots = 8;
  const Plan asked = buildAtBestDepth(Algorithm::Hierarchical, r, s, m);
  EXPECT_EQ(asked.slots, 8u);
  EXPECT_EQ(asked.fragmentCount,
            buildPlan(Algorithm::Hierarchical, request(Collective::AllReduce, 16u << 20), s).fragmentCount / 4);
  // One fragment (a small call): depth changes nothing, and the shallowest is kept.
  EXPECT_EQ(buildAtBestDepth(Algorithm::Hierarchical, request(Collective::AllReduce, 1024), s, m).slots, 2u);
}

// Inside one domain a plan whose every rank runs every step keeps one fragment in flight: more
// would only cut more fragments, each synchronising again. A staged broadcast goes deeper: its
// root stages fragment j + 1 while the others copy fragment j (Step::runner), and the fragments in
// flight no longer fit the cache together, so none of them is priced as read from it. A depth
// asked for (TIERCC_PIPELINE_SLOTS) is taken as is: fragments cut from the window's share of each
// slot.
TEST(Selector, OneDomainPipelinesOnlyWhereTheRootRunsAhead) {
  const TierModel m = runtimeDefaults();
  const Shape s = Shape::uniformDomains(1, 2);
  for (Collective c : {Collective::Broadcast, Collective::Reduce, Collective::AllGather, Collective::AllReduce}) {
    Request r = request(c, 1u << 20);  // 4 MiB
    const Plan automatic = buildAtBestDepth(Algorithm::Hierarchical, r, s, m);
    r.slots = 1;
    const Plan one = buildAtBestDepth(Algorithm::Hierarchical, r, s, m);
    EXPECT_EQ(one.slots, 1u) << toString(c);
    if (c == Collective::Broadcast) {
      EXPECT_GT(automatic.slots, 1u);
      EXPECT_LT(automatic.predictedSeconds, 0.9 * one.predictedSeconds);
      EXPECT_FALSE(peerReadsCached(automatic, m));
    } else {
      EXPECT_EQ(automatic.slots, 1u) << toString(c);
      EXPECT_DOUBLE_EQ(automatic.predictedSeconds, one.predictedSeconds) << toString(c);
    }
    r.slots = 8;
    const Plan asked = buildAtBestDepth(Algorithm::Hierarchical, r, s, m);
    EXPECT_EQ(asked.slots, 8u) << toString(c);
    EXPECT_GT(asked.fragments, one.fragments) << toString(c);
    EXPECT_LE(asked.fragmentCount * 4 * 8, kDefaultWindowBytes) << toString(c);
  }
}

// The broadcast's root and readers run side by side only on different fragments: with one slot
// their steps add up, and the deeper plan is priced below that sum but no lower than the busier
// side's work.
TEST(PipelineDepth, RootAndReadersOverlapOnlyAcrossFragments) {
  const TierModel m = runtimeDefaults();
  const Shape s = Shape::uniformDomains(1, 2);
  Request r = request(Collective::Broadcast, 1u << 20);
  r.slots = 8;
  const Plan deep = buildPlan(Algorithm::Hierarchical, r, s);
  const Price p = price(deep, m);
  double root = 0, others = 0, every = 0;
  for (std::size_t i = 0; i < deep.steps.size(); ++i)
    (deep.steps[i].runner == Runner::Root     ? root
     : deep.steps[i].runner == Runner::Others ? others
                                              : every) += p.stepSeconds[i];
  ASSERT_GT(root, 0);
  ASSERT_GT(others, 0);
  EXPECT_GE(p.seconds, every + std::max(root, others));
  EXPECT_LT(p.seconds, every + root + others);
  Plan serial = deep;
  serial.slots = 1;
  EXPECT_DOUBLE_EQ(serial.combine(p.stepSeconds, p.inFlightSeconds), every + root + others);
}

// A larger window than the default only adds room: a pipelined plan may still cut its fragments
// from a share of it, down to the default's, where that prices faster (a call of a few windows'
// worth fills its pipeline sooner), and every path of the call cuts the same. With the default
// window nothing changes: no share is smaller than the whole.
TEST(PipelineDepth, FragmentsFromAShareOfALargerWindow) {
  const TierModel m = clusterLike();
  const Shape s = Shape::uniformDomains(16, 8);
  Request r = request(Collective::AllReduce, 16u << 20);  // 64 MiB: two fragments of a 64 MiB window
  r.windowBytes = 64u << 20;
  const Plan best = buildAtBestDepth(Algorithm::Hierarchical, r, s, m);
  EXPECT_LT(best.windowBytes, r.windowBytes);
  EXPECT_GE(best.windowBytes, kDefaultWindowBytes);
  for (std::size_t share = r.windowBytes; share >= kDefaultWindowBytes; share /= 2)
    for (std::uint32_t slots : {2u, 4u, 8u}) {
      Request at = r;
      at.windowBytes = share;
      at.slots = slots;
      EXPECT_LE(best.predictedSeconds, price(buildPlan(Algorithm::Hierarchical, at, s), m).seconds)
          << share << " B, " << slots << " slots";
    }
  const Request same = atDepthOf(best, r);
  EXPECT_EQ(same.windowBytes, best.windowBytes);
  EXPECT_EQ(buildPlan(Algorithm::Hierarchical, same, s).fragmentCount, best.fragmentCount);

  r.windowBytes = kDefaultWindowBytes;
  EXPECT_EQ(buildAtBestDepth(Algorithm::Hierarchical, r, s, m).windowBytes, kDefaultWindowBytes);
}

// The window from the cost model (TIERCC_SHM_CHUNK=auto): on NVLink-class figures a 4 MiB window
// holds less than one fragment's trip over the rails, so a long allreduce runs below its busiest
// tier's rate; the cost model takes the smallest power-of-two window within 5% of the largest's.
// On this host's figures (30 us a rail message at 1.25 GB/s) the default holds it.
TEST(WindowSize, FromTheCostModel) {
  const TierModel nvl = clusterLike();
  const Shape s = Shape::uniformDomains(16, 72);
  constexpr std::size_t kMost = 64u << 20;
  const std::size_t w = windowFromModel(s, nvl, kDefaultWindowBytes, kMost);
  EXPECT_GT(w, kDefaultWindowBytes);
  EXPECT_LE(w, kMost);
  EXPECT_EQ(w & (w - 1), 0u) << w;  // the default times a power of two
  Request r = request(Collective::AllReduce, kWindowReferenceWindows * kMost / 4);
  const auto at = [&](std::size_t window) {
    r.windowBytes = window;
    return buildAtBestDepth(Algorithm::Hierarchical, r, s, nvl).predictedSeconds;
  };
  EXPECT_LE(at(w), kWindowSlack * at(kMost));
  EXPECT_GT(at(w / 2), kWindowSlack * at(kMost));  // half of it would not do

  EXPECT_EQ(windowFromModel(Shape::uniformDomains(2, 2), runtimeDefaults(), kDefaultWindowBytes, kMost),
            kDefaultWindowBytes);
  EXPECT_EQ(windowFromModel(Shape::uniformDomains(1, 1), nvl, kDefaultWindowBytes, kMost), kDefaultWindowBytes);
  EXPECT_EQ(windowFromModel(s, nvl, kDefaultWindowBytes, kDefaultWindowBytes), kDefaultWindowBytes);
  EXPECT_EQ(windowFromModel(s, nvl, kDefaultWindowBytes, 8u << 20), 8u << 20);  // the most it may take
}

}  // namespace
}  // namespace tiercc
