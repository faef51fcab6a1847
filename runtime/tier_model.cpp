// The tier model from the settings (see tier_model.hpp).
#include "runtime/tier_model.hpp"

#include <unistd.h>

#include <charconv>

#include "core/errors.hpp"
#include "core/params.hpp"
#include "plan/window_size.hpp"

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

// A window the domains can allocate: whole cache lines, at least a page.
std::size_t windowBytesFrom(const char* param) {
  const std::int64_t bytes = params::getInt(param);
  TIERCC_REQUIRE_ARG(bytes >= 4096 && bytes % 64 == 0, param, " must be a multiple of 64 and at least 4096, got ",
                     bytes);
  return static_cast<std::size_t>(bytes);
}

}  // namespace

LinkSpec scaleUpPacingFromParams() { return specFrom("TIERCC_EMU_SCALEUP_BW", "TIERCC_EMU_SCALEUP_LATENCY"); }
LinkSpec scaleOutPacingFromParams() { return specFrom("TIERCC_EMU_SCALEOUT_BW", "TIERCC_EMU_SCALEOUT_LATENCY"); }

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

std::size_t coreCacheBytes() {
  const std::string text = params::getString("TIERCC_TUNE_CACHE");
  if (text == "auto") {
    const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return l2 > 0 ? static_cast<std::size_t>(l2) : 0;
  }
  std::size_t bytes = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), bytes);
  TIERCC_REQUIRE_ARG(ec == std::errc() && end == text.data() + text.size(), "TIERCC_TUNE_CACHE='", text,
                     "' is not auto or a number of bytes");
  return bytes;
}

WindowSetting windowSettingFromParams() {
  WindowSetting w;
  w.most = windowBytesFrom("TIERCC_SHM_CHUNK_MAX");
  if (params::getString("TIERCC_SHM_CHUNK") != "auto") w.asked = windowBytesFrom("TIERCC_SHM_CHUNK");
  return w;
}

std::size_t WindowSetting::resolve(const Shape& shape, const TierModel& model, std::uint32_t slots) const {
  return asked ? asked : windowFromModel(shape, model, kDefaultWindowBytes, most, slots);
}

std::string WindowSetting::describe() const { return asked ? std::to_string(asked) : "auto<=" + std::to_string(most); }

}  // namespace tiercc
