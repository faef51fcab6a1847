// The root cause of a failure, agreed through the store. When rank 3 dies, its neighbours see it
// directly, but the ranks that only talk to those neighbours see them stop, and would name the
// messenger. So the first rank to fail publishes what it saw before it stops its tiers, and every
// rank that fails after it reports that verdict, with what it saw itself beside it. The failure
// detectors read it too, so that ranks with nothing in flight hear of the failure within a
// heartbeat period.
#pragma once

#include <string>
#include <string_view>

#include "tiercc/deadline.hpp"
#include "tiercc/store.hpp"

namespace tiercc {

/// Where the verdict lives, in the communicator's store namespace.
inline constexpr const char* kFailureVerdictKey = "failure/verdict";

/// A verdict that begins with this is the caller's error, not a failure: the ranks called
/// different collectives (or counts, datatypes, ops, roots). Every rank that hears it raises
/// InvalidArgument, as the rank that saw it did.
inline constexpr std::string_view kCallsDifferMark = "the ranks' calls differ, ";
inline bool callsDiffer(const std::string& verdict) { return verdict.starts_with(kCallsDifferMark); }

/// Publishes `mine` as the communicator's failure verdict if no rank has yet; true if it did.
bool publishFailureVerdict(Store& store, const std::string& mine);

/// Publishes `mine` as the communicator's failure verdict if no rank has yet, and returns the
/// verdict: `mine` for the first rank to call, the first one's for everyone else (waiting for
/// it until `deadline`). Throws what the store throws (the caller then keeps its own view).
std::string agreeOnFailureVerdict(Store& store, const std::string& mine, Deadline deadline);

}  // namespace tiercc
