// Pairwise exchange pattern math (all-to-all): p steps; at step s rank i exchanges with
// (s - i) mod p, a symmetric pairing (i's peer at step s has i as its peer at step s), so each
// step is one send and one receive with the same rank, and in place works block by block.
// Every rank meets every rank, itself included (the step where it copies its own block),
// exactly once. O(1) per query.
#pragma once

#include "plan/pattern/pattern.hpp"

namespace tiercc::pattern {

/// Steps of a pairwise exchange over p ranks.
inline int pairwiseSteps(int p) { return p; }
/// Rank i's peer at step s in [0, p): i itself at exactly one step.
inline int pairwisePeer(int p, int i, int step) { return wrap(static_cast<long long>(step) - i, p); }

}  // namespace tiercc::pattern
