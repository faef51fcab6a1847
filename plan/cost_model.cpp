// The alpha-beta cost model (see cost_model.hpp).
#include "plan/cost_model.hpp"

#include "core/params.hpp"

namespace tiercc {
namespace {

LinkSpec specFrom(const char* bwParam, const char* latParam, const char* emuBwParam, const char* emuLatParam) {
  LinkSpec spec;
  spec.bytesPerSec = params::getBandwidth(bwParam).value_or(0);
  spec.latencySec = params::getLatency(latParam).value_or(0);
  if (auto emuBw = params::getBandwidth(emuBwParam); emuBw && *emuBw > 0) spec.bytesPerSec = *emuBw;
  if (auto emuLat = params::getLatency(emuLatParam)) spec.latencySec = *emuLat;
  return spec;
}

}  // namespace

const LinkSpec& TierModel::linkFor(const Step& step) const {
  if (step.tier == Tier::ScaleOut) return scaleOut;
  return step.overTransport ? transportInside : scaleUp;
}

TierModel TierModel::fromParams() {
  TierModel m;
  m.scaleUp = specFrom("TIERCC_TUNE_SCALEUP_BW", "TIERCC_TUNE_SCALEUP_LATENCY", "TIERCC_EMU_SCALEUP_BW",
                       "TIERCC_EMU_SCALEUP_LATENCY");
  m.scaleOut = specFrom("TIERCC_TUNE_SCALEOUT_BW", "TIERCC_TUNE_SCALEOUT_LATENCY", "TIERCC_EMU_SCALEOUT_BW",
                        "TIERCC_EMU_SCALEOUT_LATENCY");
  // In the runtime, a flat algorithm's messages inside a domain take the transport too.
  m.transportInside = m.scaleOut;
  return m;
}

Price price(const Plan& plan, const TierModel& model) {
  Price p;
  for (const Step& st : plan.steps) {
    const LinkSpec& link = model.linkFor(st);
    double s = st.latencySteps * link.latencySec;
    if (link.bytesPerSec > 0) s += st.busiestBytes / link.bytesPerSec;
    p.stepSeconds.push_back(s);
  }
  p.seconds = plan.combine(p.stepSeconds);
  return p;
}

}  // namespace tiercc
