// Ring pattern math: neighbours, and the block each step of a ring reduce-scatter or allgather
// sends and receives. O(1) per query. Rank i sends to i + 1 and receives from i - 1 (mod p);
// blocks are numbered like ranks, and block b ends (fully reduced, or gathered) at rank b.
#pragma once

#include "plan/pattern/pattern.hpp"

namespace tiercc::pattern {

inline int ringNext(int p, int i) { return i + 1 == p ? 0 : i + 1; }
inline int ringPrev(int p, int i) { return i == 0 ? p - 1 : i - 1; }

/// Reduce-scatter, step s in [0, p - 1): rank i sends its partial of this block to ringNext.
/// At step 0 the partial is its own input; block b is reduced first at rank b + 1 and last at b.
inline int ringReduceScatterSendBlock(int p, int i, int step) { return wrap(static_cast<long long>(i) - step - 1, p); }
/// Reduce-scatter, step s: the block whose partial arrives from ringPrev, to be combined with
/// this rank's input of that block. At the last step (p - 2) it is block i itself.
inline int ringReduceScatterRecvBlock(int p, int i, int step) { return wrap(static_cast<long long>(i) - step - 2, p); }

/// Allgather, step s in [0, p - 1): rank i forwards block i - s (its own at step 0).
inline int ringAllgatherSendBlock(int p, int i, int step) { return wrap(static_cast<long long>(i) - step, p); }
/// Allgather, step s: the block that arrives from ringPrev.
inline int ringAllgatherRecvBlock(int p, int i, int step) { return wrap(static_cast<long long>(i) - step - 1, p); }

}  // namespace tiercc::pattern
