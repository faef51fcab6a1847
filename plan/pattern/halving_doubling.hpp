// Butterfly pattern math: recursive halving (reduce-scatter) and recursive doubling (allgather,
// or allreduce on the whole vector) over p ranks, with non-power-of-two folding.
//
// Folding: with p2 the largest power of two <= p and r = p - p2, the even ranks below 2r fold:
// they send their vector to their odd neighbour (i + 1), sit out the butterfly, and get the
// result back at the end. The p2 remaining ranks have virtual ranks v: rank 2v + 1 for v < r,
// v + r beyond (the mapping plan/algorithms/butterfly.cpp prices and exec/butterfly_steps.cpp runs).
//
// Butterfly step s (0 .. log2 p2 - 1) pairs v with v XOR 2^s: distance 1 first, so the largest
// exchanges of the halving stay between neighbours (often in one domain). The vector is split
// into p2 blocks (pattern.hpp's blockBegin); halving step s leaves v with half of the blocks it
// had, and after the last step v owns the single block bitReverse(v). The doubling allgather
// undoes the steps in reverse order. Every query is O(log p), with no allocation.
#pragma once

#include "plan/pattern/pattern.hpp"

namespace tiercc::pattern {

/// Blocks [begin, end).
struct BlockRange {
  int begin = 0;
  int end = 0;
  int size() const { return end - begin; }
  bool operator==(const BlockRange&) const = default;
};

class Butterfly {
 public:
  explicit Butterfly(int p) : p2_(floorPow2(p)), extra_(p - p2_), steps_(ceilLog2(p2_)) {}

  /// Ranks in the butterfly: the largest power of two <= p.
  int participants() const { return p2_; }
  /// Ranks that fold: p - participants().
  int extra() const { return extra_; }
  /// Butterfly steps: log2(participants()).
  int steps() const { return steps_; }

  /// True for a rank that folds into foldPartner(i) and sits out the butterfly.
  bool folds(int i) const { return i < 2 * extra_ && i % 2 == 0; }
  /// The folding partner of rank i (i XOR 1 below 2r), or -1 when i takes no part in folding.
  int foldPartner(int i) const { return i < 2 * extra_ ? (i ^ 1) : -1; }
  /// Virtual rank of rank i in the butterfly, or -1 if i folds.
  int virtualRank(int i) const { return i < 2 * extra_ ? (i % 2 ? i / 2 : -1) : i - extra_; }
  /// Rank of virtual rank v.
  int realRank(int v) const { return v < extra_ ? 2 * v + 1 : v + extra_; }
  /// Virtual peer of v at step s.
  int peer(int v, int step) const { return v ^ (1 << step); }

  /// Halving: the blocks v holds before step s (all p2 blocks before step 0).
  BlockRange heldBefore(int v, int step) const {
    // Each earlier step s halves the range, keeping the upper half when bit s of v is set.
    BlockRange r{0, p2_};
    for (int s = 0; s < step; ++s) {
      const int half = r.size() / 2;
      if (v & (1 << s))
        r.begin += half;
      else
        r.end -= half;
    }
    return r;
  }
  /// Halving: the blocks v keeps (and reduces) at step s, which it holds before step s + 1;
  /// what its peer sends it.
  BlockRange kept(int v, int step) const { return heldBefore(v, step + 1); }
  /// Halving: the blocks v sends at step s (the half of heldBefore it does not keep), which
  /// is kept(peer(v, s), s).
  BlockRange sent(int v, int step) const { return kept(peer(v, step), step); }
  /// The block v owns after the halving, bitReverse(v) over steps() bits: all it holds at the end.
  int ownedBlock(int v) const { return heldBefore(v, steps_).begin; }

 private:
  int p2_, extra_, steps_;
};

}  // namespace tiercc::pattern
