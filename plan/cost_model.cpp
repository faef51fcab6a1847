// The alpha-beta cost model (see cost_model.hpp).
#include "plan/cost_model.hpp"

#include <algorithm>

namespace tiercc {
namespace {

double over(double bytes, double bytesPerSec) { return bytesPerSec > 0 ? bytes / bytesPerSec : 0; }

}  // namespace

const LinkSpec& TierModel::linkFor(const Step& step) const {
  if (step.tier == Tier::ScaleOut) return scaleOut;
  if (step.overTransport) return transportInside;
  return step.path == Path::CrossMemory && step.group == Group::Domain ? crossMemory : scaleUp;
}

double stepSeconds(const Step& st, const TierModel& m) {
  // Latency: one synchronisation or message round per latency step, on the tier's link (a
  // cross-memory step still synchronises through the domain; its reads pay their own calls).
  const LinkSpec& link = m.linkFor(st);
  const LinkSpec& sync = &link == &m.crossMemory ? m.scaleUp : link;
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
  for (const Step& st : plan.steps) {
    p.stepSeconds.push_back(stepSeconds(st, model));
    p.inFlightSeconds.push_back(inFlightSeconds(st, model));
  }
  p.seconds = plan.combine(p.stepSeconds, p.inFlightSeconds);
  return p;
}

}  // namespace tiercc
