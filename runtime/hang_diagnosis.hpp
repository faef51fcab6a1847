// Naming the culprit of a hang from every rank's published progress (progress.hpp). A rank that
// times out in collective #S knows only the peer it waited for, which may itself be waiting on
// someone else; the progress says who holds everyone up: a rank that has not entered #S (it
// skipped it, or hangs in an earlier call), or one that entered a different call as #S. Every
// waiting rank computes the same answer from the same data, so every error names the same rank.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "plan/topology.hpp"
#include "runtime/progress.hpp"

namespace tiercc {

/// What `all` (every rank's progress, nullopt where none was published) says of this rank's
/// collective `seq`, `mine`, at wall-clock time `nowMs`: "rank 5 (domain 1, local rank 1) has not
/// entered allreduce #10 (...); it completed #9 4.8 s ago and has not called a collective since;
/// waiting in allreduce #10 (...): ranks 0-4, 6, 7", or, for a rank that entered another call as
/// #10 than most ranks did, a mismatch naming both calls. When every rank entered the same call,
/// the rank at the end of the chains of waits, running it and waiting on nobody ("rank 0 ... is
/// in allreduce #10 (...), step 3 of 5, and waits on no rank: it is stuck in that step"); empty
/// when there is none (the waits' own messages say the rest).
/// `callsDiffer`, when given, says whether a rank called something else (a caller's error).
std::string diagnoseHang(const Topology& topo, std::int64_t seq, const CallSignature& mine,
                         const std::vector<std::optional<Progress>>& all, std::int64_t nowMs,
                         bool* callsDiffer = nullptr);

/// "0-4, 6, 7": ranks as ranges, for messages.
std::string rankRanges(const std::vector<int>& ranks);

}  // namespace tiercc
