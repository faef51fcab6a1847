// The staging window the cost model asks for (see window_size.hpp).
#include "plan/window_size.hpp"

#include <limits>

#include "plan/pipeline_depth.hpp"
#include "plan/registry.hpp"

namespace tiercc {

std::size_t windowFromModel(const Shape& shape, const TierModel& model, std::size_t minBytes, std::size_t maxBytes,
                            std::uint32_t slots) {
  if (shape.size() < 2 || maxBytes <= minBytes) return minBytes;
  Request req;
  req.coll = Collective::AllReduce;
  req.dt = DataType::F32;
  req.slots = slots;
  req.count = kWindowReferenceWindows * maxBytes / dataTypeSize(req.dt);
  if (!unsupportedReason(Algorithm::Hierarchical, req, shape).empty()) return minBytes;
  const auto secondsAt = [&](std::size_t windowBytes) {
    req.windowBytes = windowBytes;
    const Plan plan = buildAtBestDepth(Algorithm::Hierarchical, req, shape, model);
    return plan.unfit.empty() ? plan.predictedSeconds : std::numeric_limits<double>::infinity();
  };
  const double largest = secondsAt(maxBytes);
  for (std::size_t w = minBytes; w < maxBytes; w *= 2)
    if (secondsAt(w) <= kWindowSlack * largest) return w;
  return maxBytes;
}

}  // namespace tiercc
