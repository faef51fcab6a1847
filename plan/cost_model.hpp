// The cost model: prices a plan in seconds, step by step, as latency x latencySteps +
// busiestBytes / bandwidth of the link that carries the step (the alpha-beta model; link
// sharing is already in busiestBytes, which counts every flow on the busiest link), plus what
// the busiest rank copies in its own memory and, on the cross-memory path, its system calls.
// The selector and tiercc-sim call the same price(); nothing else prices a plan.
#pragma once

#include <vector>

#include "core/link_model.hpp"
#include "plan/plan.hpp"

namespace tiercc {

/// What the links of a cluster do, per rank and direction.
struct TierModel {
  LinkSpec scaleUp;              ///< through the domain's windows or peers' mapped buffers (NVLink; here: memory)
  LinkSpec scaleOut;             ///< over the transport, across domains (the NIC)
  LinkSpec transportInside;      ///< over the transport between ranks of one domain: in tiercc's
                                 ///< runtime the same kind of connection as scale-out; a cluster
                                 ///< model (tiercc-sim) sets it to scaleUp, as NCCL would ride NVLink
  LinkSpec local;                ///< copies within a rank's own memory (staging); 0: free
  LinkSpec crossMemory;          ///< reads of peers' buffers through the kernel: latency per call
  double fabricBytesPerSec = 0;  ///< all scale-out traffic together (a cluster's fabric); 0: no limit
  /// A core's own cache (L2), for domains in one host's memory. What a rank stages for its peers
  /// stays in its core's cache while they read it if the reads of peers' memory of the fragments
  /// in flight fit there: they then run at the local rate. Beyond, the lines cross between the
  /// cores' caches at the scale-up rate (docs/performance.md, "Copies in pieces"). 0: no cache
  /// (NVLink, a paced link, tiercc-sim).
  std::size_t cacheBytes = 0;

  /// The link whose bandwidth paces `step`; `cached`: its plan's reads of peers fit the cache.
  const LinkSpec& linkFor(const Step& step, bool cached = false) const;
};

struct Price {
  double seconds = 0;
  std::vector<double> stepSeconds;
  /// Of each step's time, what its posted transfers spend in flight (a scale-out step's latency),
  /// which a pipelined plan's other fragments may hide (Plan::combine).
  std::vector<double> inFlightSeconds;
};

/// Whether the plain reads of peers' memory (windows, mapped buffers) of the fragments `plan`
/// keeps in flight fit TierModel::cacheBytes.
bool peerReadsCached(const Plan& plan, const TierModel& model);
/// The time of one step (`cached`: peerReadsCached of its plan), and of a plan (Plan::combine
/// of its steps').
double stepSeconds(const Step& step, const TierModel& model, bool cached = false);
/// The part of stepSeconds a scale-out step's transfers spend in flight: its latency steps.
double inFlightSeconds(const Step& step, const TierModel& model);
Price price(const Plan& plan, const TierModel& model);

}  // namespace tiercc
