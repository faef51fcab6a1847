// The tier model a communicator prices its plans with, from its settings (the plan layer reads
// no environment).
#pragma once

#include <string>

#include "plan/cost_model.hpp"

namespace tiercc {

/// From TIERCC_TUNE_*, or the TIERCC_EMU_* pacing where it is set (a paced tier is as fast as
/// its pacing says). In the runtime a flat algorithm's messages inside a domain take the
/// transport too, so they are priced as scale-out.
TierModel tierModelFromParams();

/// The link model's pacing of each tier (TIERCC_EMU_SCALEUP_*, TIERCC_EMU_SCALEOUT_*): what a
/// LinkModel enforces; not paced where unset.
LinkSpec scaleUpPacingFromParams();
LinkSpec scaleOutPacingFromParams();

/// This rank's TierModel::cacheBytes from TIERCC_TUNE_CACHE: "auto" is this CPU's L2 (0 where
/// the system does not say), else a byte count. InvalidArgument when malformed. Ranks agree on
/// the smallest (RankInfo::cacheBytes).
std::size_t coreCacheBytes();

/// The staging window from TIERCC_SHM_CHUNK and TIERCC_SHM_CHUNK_MAX: each rank's, in bytes, or
/// auto. Parsed before any rank waits, so that a malformed value fails alone.
struct WindowSetting {
  std::size_t asked = 0;  ///< TIERCC_SHM_CHUNK; 0: auto
  std::size_t most = 0;   ///< TIERCC_SHM_CHUNK_MAX: the largest auto takes
  /// The window on `shape` priced with `model` (plan/window_size.hpp); `slots`: Request::slots.
  std::size_t resolve(const Shape& shape, const TierModel& model, std::uint32_t slots = 0) const;
  /// As the settings check compares it: "auto<=67108864" or the bytes asked.
  std::string describe() const;
};
/// InvalidArgument naming the parameter when one is not a multiple of 64 of at least 4096 (or
/// auto, for TIERCC_SHM_CHUNK).
WindowSetting windowSettingFromParams();

}  // namespace tiercc
