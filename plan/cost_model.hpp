// The cost model: prices a plan in seconds, step by step, as latency x latencySteps +
// busiestBytes / bandwidth of the link kind that paces the step (the alpha-beta model; link
// sharing is already in busiestBytes, which counts every flow on the busiest link).
#pragma once

#include <vector>

#include "plan/plan.hpp"
#include "core/link_model.hpp"

namespace tiercc {

/// What the links of a cluster do, per rank and direction.
struct TierModel {
  LinkSpec scaleUp;          ///< through the domain's shared windows (NVLink; here: memory)
  LinkSpec scaleOut;         ///< over the transport, across domains (the NIC)
  LinkSpec transportInside;  ///< over the transport between ranks of one domain: in tiercc's
                             ///< runtime the same kind of connection as scale-out; a cluster
                             ///< model (tiercc-sim) sets it to scaleUp, as NCCL would ride NVLink
  /// The link that carries `step`.
  const LinkSpec& linkFor(const Step& step) const;
  /// From TIERCC_TUNE_SCALE{UP,OUT}_{BW,LATENCY}, or the TIERCC_EMU_* pacing when it is set
  /// (a paced tier is as fast as its pacing says).
  static TierModel fromParams();
};

struct Price {
  double seconds = 0;
  std::vector<double> stepSeconds;
};

Price price(const Plan& plan, const TierModel& model);

}  // namespace tiercc
