// tiercc-info --job HOST:PORT: a live job, read from its bootstrap store without joining it. Per
// rank: the last collective it entered and its state, the step it is in and the rank and tier
// it waits on, when it completed its last one, and how old its last heartbeat is; then what the
// progress says holds the job up (runtime/hang_diagnosis.hpp), and the failure verdict if one
// was published.
#pragma once

#include <ostream>
#include <string>

namespace tiercc::info {

/// Prints the job whose store is at `address`; `communicator` is the n-th communicator created
/// on it (1: the first, usually the world). Error{Timeout} if the store does not answer.
void printLiveJob(std::ostream& out, const std::string& address, int communicator);

}  // namespace tiercc::info
