// The alpha-beta cost model (see cost_model.hpp).
#include "plan/cost_model.hpp"

#include <algorithm>

namespace tiercc {
namespace {

double over(double bytes, double bytesPerSec) { return bytesPerSec > 0 ? bytes / bytesPerSec : 0; }

// A step that reads domain peers' memory with plain loads: what they staged in their windows
// (or fast boxes), or their mapped buffers (zero copy).
bool readsPeers(const Step& st) {
  return st.tier == Tier::ScaleUp && st.group == Group::Domain && !st.overTransport && st.path != Path::CrossMemory;
}

}  // namespace

const LinkSpec& TierModel::linkFor(const Step& step, bool cached) const {
  if (step.tier == Tier::ScaleOut) return scaleOut;
  if (step.overTransport) return transportInside;
  if (step.path == Path::CrossMemory && step.group == Group::Domain) return crossMemory;
  return cached && readsPeers(step) && local.bytesPerSec > 0 ? local : scaleUp;
}

bool peerReadsCached(const Plan& plan, const TierModel& m) {
  if (m.cacheBytes == 0 || plan.fragments == 0) return false;
  double perFragment = 0;
  for (const Step& st : plan.steps)
    if (readsPeers(st)) perFragment += st.busiestBytes / plan.fragments;
  // The fragments in flight share the cache: a pipelined root stages fragment j + 1 while the
  // others read fragment j (docs/performance.md, "Broadcast pipelined inside a domain": 512 KiB
  // fragments 8 deep were read at the rate of lines crossing between cores, not the cache's).
  const double inFlight = std::min<double>(std::max<std::uint32_t>(plan.slots, 1), plan.fragments);
  return perFragment * inFlight < double(m.cacheBytes);
}

double stepSeconds(const Step& st, const TierModel& m, bool cached) {
  // Latency: one synchronisation or message round per latency step, on the tier's link (a
  // cross-memory step, or one whose reads hit the cache, still synchronises through the domain;
  // cross-memory reads pay their own calls).
  const LinkSpec& link = m.linkFor(st, cached);
  const LinkSpec& sync = &link == &m.crossMemory || &link == &m.local ? m.scaleUp : link;
  const double transfer =
      std::max(over(st.busiestBytes, link.bytesPerSec), over(double(st.scaleOutBytes), m.fabricBytesPerSec));
  return st.latencySteps * sync.latencySec + transfer + over(st.localBytes, m.local.bytesPerSec) +
         st.crossMemoryReads * m.crossMemory.latencySec;
}

// A posted rail transfer is on the wire while the rank goes on with other fragments (the
// executor runs up to Plan::slots at once). Scale-up latency is not: the rank waits on its
// domain's flags itself.
double inFlightSeconds(const Step& st, const TierModel& m) {
  return st.tier == Tier::ScaleOut ? st.latencySteps * m.scaleOut.latencySec : 0;
}

Price price(const Plan& plan, const TierModel& model) {
  Price p;
  p.stepSeconds.reserve(plan.steps.size());
  p.inFlightSeconds.reserve(plan.steps.size());
  const bool cached = peerReadsCached(plan, model);
  for (const Step& st : plan.steps) {
    p.stepSeconds.push_back(stepSeconds(st, model, cached));
    p.inFlightSeconds.push_back(inFlightSeconds(st, model));
  }
  p.seconds = plan.combine(p.stepSeconds, p.inFlightSeconds);
  return p;
}

}  // namespace tiercc
