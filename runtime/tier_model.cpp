// The tier model from the settings (see tier_model.hpp).
#include "runtime/tier_model.hpp"

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

}  // namespace

TierModel tierModelFromParams() {
  TierModel m;
  m.scaleUp = specFrom("TIERCC_TUNE_SCALEUP_BW", "TIERCC_TUNE_SCALEUP_LATENCY", "TIERCC_EMU_SCALEUP_BW",
                       "TIERCC_EMU_SCALEUP_LATENCY");
  m.scaleOut = specFrom("TIERCC_TUNE_SCALEOUT_BW", "TIERCC_TUNE_SCALEOUT_LATENCY", "TIERCC_EMU_SCALEOUT_BW",
                        "TIERCC_EMU_SCALEOUT_LATENCY");
  m.transportInside = m.scaleOut;
  m.local = specFrom("TIERCC_TUNE_LOCAL_BW", nullptr);
  m.crossMemory = specFrom("TIERCC_TUNE_CMA_BW", "TIERCC_TUNE_CMA_LATENCY");
  return m;
}

}  // namespace tiercc
