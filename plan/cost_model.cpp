// The alpha-beta cost model (see cost_model.hpp).
#include "plan/cost_model.hpp"

#include <algorithm>

#include "core/params.hpp"

namespace tiercc {
namespace {

LinkSpec specFrom(const char* bwParam, const char* latParam, const char* emuBwParam = nullptr,
                  const char* emuLatParam = nullptr) {
  LinkSpec spec;
  spec.bytesPerSec = params::getBandwidth(bwParam).value_or(0);
  spec.latencySec = latParam ? params::getLatency(latParam).value_or(0) : 0;
  if (!emuBwParam) return spec;
  if (auto emuBw = params::getBandwidth(emuBwParam); emuBw && *emuBw > 0) spec.bytesPerSec = *emuBw;
  if (auto emuLat = params::getLatency(emuLatParam)) spec.latencySec = *emuLat;
  return spec;
}

double over(double bytes, double bytesPerSec) { return bytesPerSec > 0 ? bytes / bytesPerSec : 0; }

}  // namespace

const LinkSpec& TierModel::linkFor(const Step& step) const {
  if (step.tier == Tier::ScaleOut) return scaleOut;
  if (step.overTransport) return transportInside;
  return step.path == Path::CrossMemory && step.group == Group::Domain ? crossMemory : scaleUp;
}

TierModel TierModel::fromParams() {
  TierModel m;
  m.scaleUp = specFrom("TIERCC_TUNE_SCALEUP_BW", "TIERCC_TUNE_SCALEUP_LATENCY", "TIERCC_EMU_SCALEUP_BW",
                       "TIERCC_EMU_SCALEUP_LATENCY");
  m.scaleOut = specFrom("TIERCC_TUNE_SCALEOUT_BW", "TIERCC_TUNE_SCALEOUT_LATENCY", "TIERCC_EMU_SCALEOUT_BW",
                        "TIERCC_EMU_SCALEOUT_LATENCY");
  // In the runtime, a flat algorithm's messages inside a domain take the transport too.
  m.transportInside = m.scaleOut;
  m.local = specFrom("TIERCC_TUNE_LOCAL_BW", nullptr);
  m.crossMemory = specFrom("TIERCC_TUNE_CMA_BW", "TIERCC_TUNE_CMA_LATENCY");
  return m;
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

Price price(const Plan& plan, const TierModel& model) {
  Price p;
  p.stepSeconds.reserve(plan.steps.size());
  for (const Step& st : plan.steps) p.stepSeconds.push_back(stepSeconds(st, model));
  p.seconds = plan.combine(p.stepSeconds);
  return p;
}

}  // namespace tiercc
