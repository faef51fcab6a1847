// The pipeline depth (see pipeline_depth.hpp).
#include "plan/pipeline_depth.hpp"

#include <algorithm>

#include "plan/registry.hpp"

namespace tiercc {

Plan buildAtBestDepth(Algorithm a, const Request& req, const Shape& shape, const TierModel& model) {
  Plan best = buildPlan(a, req, shape);
  best.predictedSeconds = price(best, model).seconds;
  // Inside one domain a staged plan starts at one slot, and goes deeper where different ranks
  // run its steps (plan.cpp's combine: one rank's steps overlap another's). Where every rank runs
  // every step, the cache term alone would price smaller fragments cheaper, which measures no
  // faster here (allgather and reduce on 2 ranks, 256 KiB to 32 MiB: docs/performance.md).
  const bool splitRoles =
      std::any_of(best.steps.begin(), best.steps.end(), [](const Step& st) { return st.runner != Runner::Every; });
  const bool oneDomain = shape.numDomains() <= 1 && best.rounds == Rounds::PerFragment && req.slots == 0 && splitRoles;
  if (best.slots <= 1 && !oneDomain) return best;
  const std::uint32_t first = best.slots, last = req.slots != 0 ? best.slots : kMaxSlots;
  // Inside one domain no rail message is cut, and a fragment costs a round of the domain's flags:
  // a quarter of the default window, fragments of 128 KiB at 8 slots (of 64 KiB the model prices
  // as fast, and they measure 5-10% slower for a 4-8 MiB broadcast on 2 ranks here).
  const std::size_t smallestShare = oneDomain ? kDefaultWindowBytes / 4 : kDefaultWindowBytes;
  for (std::uint32_t slots = first; slots <= last; slots *= 2)
    for (std::size_t share = req.windowBytes; share == req.windowBytes || share >= smallestShare; share /= 2) {
      if (slots == first && share == req.windowBytes) continue;  // `best` already
      Request cut = req;
      cut.slots = slots;
      cut.windowBytes = share;
      Plan plan = buildPlan(a, cut, shape);
      if (!plan.unfit.empty()) {
        if (share == req.windowBytes) return best;  // deeper still cuts smaller fragments: they do not fit either
        break;                                      // and so do smaller shares of the window
      }
      plan.predictedSeconds = price(plan, model).seconds;
      if (plan.predictedSeconds < best.predictedSeconds) best = std::move(plan);
    }
  return best;
}

Request atDepthOf(const Plan& staged, Request req) {
  req.slots = staged.slots;
  req.windowBytes = staged.windowBytes;
  return req;
}

}  // namespace tiercc
