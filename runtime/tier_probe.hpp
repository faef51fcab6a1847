// A short probe of both tiers at init (TIERCC_TUNE_PROBE=on), so that the cost model prices
// plans with what this cluster's links do rather than with configured figures:
//  - scale-out: each rank with a rail peer shifts messages along its rail (to the next domain,
//    from the previous), 8 B for latency and 1 MiB for bandwidth, as the hierarchical
//    algorithms do;
//  - scale-up: each rank copies a domain peer's window (the fast tier's work).
// Every rank must price alike (else the selectors choose differently and the collective
// deadlocks), so rank 0 takes the medians of what the ranks measured and every rank uses those.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "plan/cost_model.hpp"
#include "tiercc/deadline.hpp"

namespace tiercc {

class Domain;
class Store;
class Topology;
class Transport;

/// What one rank measured; a tier it could not measure is empty.
struct ProbeSample {
  std::optional<double> scaleOutLatencySec, scaleOutBytesPerSec, scaleUpBytesPerSec;
  std::string encode() const;
  static ProbeSample decode(const std::string& text);  ///< InvalidArgument when malformed
};

/// `configured` with each tier figure replaced by the median of the samples that measured it.
TierModel agreeOnProbes(const TierModel& configured, const std::vector<ProbeSample>& samples);

/// Measures this rank's tiers (collective: every rank of the communicator calls it once, before
/// any collective). A tier paced by the link model (TIERCC_EMU_*) keeps its pacing: it is what
/// the collectives will see.
ProbeSample probeTiers(const Topology& topo, Domain& domain, Transport* transport, bool scaleOutPaced,
                       bool scaleUpPaced, Deadline deadline);

/// Publishes `mine` through `store`, and returns the model every rank agrees on (rank 0 combines).
TierModel shareProbes(Store& store, const Topology& topo, const ProbeSample& mine, const TierModel& configured,
                      Deadline deadline);

}  // namespace tiercc
