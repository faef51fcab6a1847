// The pipeline depth (see pipeline_depth.hpp).
#include "plan/pipeline_depth.hpp"

#include "plan/registry.hpp"

namespace tiercc {

Plan buildAtBestDepth(Algorithm a, const Request& req, const Shape& shape, const TierModel& model) {
  Plan best = buildPlan(a, req, shape);
  best.predictedSeconds = price(best, model).seconds;
  // Staged plans inside one domain start at one slot: deeper, a broadcast's root runs ahead.
  if (best.slots <= 1 && best.rounds != Rounds::PerFragment) return best;
  const std::uint32_t first = best.slots, last = req.slots != 0 ? best.slots : kMaxSlots;
  for (std::uint32_t slots = first; slots <= last; slots *= 2)
    for (std::size_t share = req.windowBytes; share == req.windowBytes || share >= kDefaultWindowBytes; share /= 2) {
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
