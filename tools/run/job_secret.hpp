// The job's store secret: tiercc-run starts its store with it and gives it to every rank
// (TIERCC_STORE_SECRET), so that only the job's own processes can read or write the store.
#pragma once

#include <string>

namespace tiercc::run {

/// The secret the launcher's environment names (TIERCC_STORE_SECRET), else 32 bytes of the
/// kernel's randomness as 64 hex digits. SystemError if no randomness can be had.
std::string jobSecret();

}  // namespace tiercc::run
