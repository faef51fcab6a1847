// Prices one of the runtime's plans on a modelled cluster, in two modes:
// - symmetric: the plan as built, step by step (O(steps)): latencySteps x latency +
//   max(busiestBytes / bandwidth of the step's link, scale-out bytes / fabric capacity). With a
//   non-blocking fabric this is the runtime's own cost model (plan/cost_model.hpp).
// - exact: every step expanded into per-rank flows (sim/network.hpp) that load every rank's
//   links; for up to a few thousand ranks.
#pragma once

#include <string>
#include <vector>

#include "plan/plan.hpp"
#include "sim/cluster.hpp"

namespace tiercc::sim {

enum class Mode { Symmetric, Exact };

/// The link that was busy longest over the whole collective.
struct BusiestLink {
  std::string name;    ///< "NIC out of rank 71 (rail 71)", "scale-up port of rank 0", ...
  double bytes = 0;    ///< it carried
  double seconds = 0;  ///< it was busy (bytes / bandwidth)
};

struct Result {
  Mode mode = Mode::Symmetric;
  double seconds = 0;
  std::vector<double> stepSeconds;
  double scaleUpBytes = 0;   ///< summed over ranks
  double scaleOutBytes = 0;  ///< summed over ranks
  /// Scale-out bytes per rail (the NICs of local rank r), summed over domains; empty when the
  /// plan does not say (symmetric mode, a step with no described exchange).
  std::vector<double> railBytes;
  BusiestLink busiestScaleOut, busiestScaleUp;
  double fabricSeconds = 0;  ///< the scale-out core was busy (oversubscribed fabrics)
  int stepsPricedWhole = 0;  ///< exact mode: steps with no described exchange, priced as symmetric
};

/// The cheapest plan for `req` as the runtime's selector would choose it on `cluster`'s tier
/// model, or the plan of `algorithm` (InvalidArgument if it cannot run `req`).
Plan planFor(const std::string& algorithm, const Request& req, const Shape& shape, const Cluster& cluster);
/// Prices `plan` (built for `shape`) on `cluster`. Exact mode refuses more than kExactMaxFlows
/// messages in one step (InvalidArgument).
Result simulate(const Plan& plan, const Shape& shape, const Cluster& cluster, Mode mode);
inline constexpr double kExactMaxFlows = 5e7;

/// nccl-tests' busbw factor: allreduce 2(n-1)/n; reduce-scatter, allgather, all-to-all (n-1)/n; others 1.
double busFactor(Collective c, int ranks);
/// The smallest time the slow tier allows: the bound's bytes over every NIC (and the fabric core).
double boundSeconds(const Plan& plan, const Shape& shape, const Cluster& cluster);
/// What the plan's busiest link allows: the longest of the busiest scale-up port's and NIC's busy
/// times and the slow-tier bound's (the time tiercc-sim's "pipeline" line compares with).
double busiestLinkSeconds(const Result& r, const Plan& plan, const Shape& shape, const Cluster& cluster);

}  // namespace tiercc::sim
