// The tier model a communicator prices its plans with, from its settings (the plan layer reads
// no environment).
#pragma once

#include "plan/cost_model.hpp"

namespace tiercc {

/// From TIERCC_TUNE_*, or the TIERCC_EMU_* pacing where it is set (a paced tier is as fast as
/// its pacing says). In the runtime a flat algorithm's messages inside a domain take the
/// transport too, so they are priced as scale-out.
TierModel tierModelFromParams();

/// This rank's TierModel::cacheBytes from TIERCC_TUNE_CACHE: "auto" is this CPU's L2 (0 where
/// the system does not say), else a byte count. InvalidArgument when malformed. Ranks agree on
/// the smallest (RankInfo::cacheBytes).
std::size_t coreCacheBytes();

}  // namespace tiercc
