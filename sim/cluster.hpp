// The cluster tiercc-sim prices plans on: domains of G ranks, each rank with one scale-up port
// (one switched hop to every rank of its domain) and one NIC on its rail, and a scale-out fabric
// that may be oversubscribed. Presets carry the figures of real machines (docs/simulator.md).
#pragma once

#include <string>
#include <vector>

#include "core/link_model.hpp"
#include "plan/cost_model.hpp"
#include "plan/plan.hpp"

namespace tiercc::sim {

struct Cluster {
  std::string name = "custom";
  int gpus = 0;        ///< ranks in all
  int domainSize = 0;  ///< G: ranks per scale-up domain (the last domain may be smaller)
  LinkSpec scaleUp;    ///< per rank and direction: its port into the domain's switch
  LinkSpec scaleOut;   ///< per rank and direction: its NIC (all of its NICs together)
  /// The scale-out core carries 1/oversub of what all NICs can send: when more than 1/oversub
  /// of the NICs send across domains at once, they share that capacity. 1 = non-blocking.
  double oversub = 1;
  /// Flat algorithms' messages inside a domain ride the scale-up links (true, as NCCL's do on
  /// NVLink) or the transport (false: tiercc's runtime today, for validation on this machine).
  bool flatInsideOnScaleUp = true;

  int numDomains() const { return domainSize > 0 ? (gpus + domainSize - 1) / domainSize : 0; }
  /// Domains of domainSize ranks numbered domain by domain; the last holds the remainder.
  Shape shape() const;
  /// The cost model's view: scaleUp, scaleOut, transportInside per flatInsideOnScaleUp, and
  /// the fabric's capacity.
  TierModel tierModel() const;
  /// Capacity of the scale-out core in bytes per second (all NICs / oversub).
  double fabricBytesPerSec() const { return gpus * scaleOut.bytesPerSec / oversub; }
  /// Several lines: the figures, and what a domain holds inside and sends out.
  std::string describe() const;
};

struct Preset {
  std::string name;
  std::string source;  ///< where the figures come from
  Cluster cluster;
};
/// h100-8x400g, gb200-nvl72-cx7, gb300-nvl72-cx8, rubin-nvl72.
const std::vector<Preset>& presets();
/// The preset `name`; InvalidArgument listing the presets if there is none.
Cluster presetCluster(const std::string& name);

}  // namespace tiercc::sim
