// The pipeline depth (see pipeline_depth.hpp).
#include "plan/pipeline_depth.hpp"

#include "plan/registry.hpp"

namespace tiercc {

Plan buildAtBestDepth(Algorithm a, const Request& req, const Shape& shape, const TierModel& model) {
  Plan best = buildPlan(a, req, shape);
  best.predictedSeconds = price(best, model).seconds;
  if (req.slots != 0 || best.slots <= 1) return best;
  for (std::uint32_t slots = best.slots * 2; slots <= kMaxSlots; slots *= 2) {
    Request deeper = req;
    deeper.slots = slots;
    Plan plan = buildPlan(a, deeper, shape);
    if (!plan.unfit.empty()) break;  // deeper still cuts smaller fragments: they do not fit either
    plan.predictedSeconds = price(plan, model).seconds;
    if (plan.predictedSeconds < best.predictedSeconds) best = std::move(plan);
  }
  return best;
}

Request atDepthOf(const Plan& staged, Request req) {
  req.slots = staged.slots;
  return req;
}

}  // namespace tiercc
