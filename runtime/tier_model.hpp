// The tier model a communicator prices its plans with, from its settings (the plan layer reads
// no environment).
#pragma once

#include "plan/cost_model.hpp"

namespace tiercc {

/// From TIERCC_TUNE_*, or the TIERCC_EMU_* pacing where it is set (a paced tier is as fast as
/// its pacing says). In the runtime a flat algorithm's messages inside a domain take the
/// transport too, so they are priced as scale-out.
TierModel tierModelFromParams();

}  // namespace tiercc
