// K-nomial tree pattern math (broadcast, reduce) over p ranks, any root and radix k >= 2.
//
// A rank's relative rank is rel = (i - root) mod p. Its parent clears the lowest non-zero
// base-k digit of rel; it receives at the level of that digit (distance k^level) and has
// children rel + c k^l for every lower level l and digit c in [1, k), those below p. The root
// is at level levels() = ceil(log_k p) and sends at every level. A broadcast runs levels from
// the top down (so deep subtrees start early), a reduce from the bottom up: ceil(log_k p)
// rounds either way. Queries are O(log_k p), with no allocation.
#pragma once

#include <array>

namespace tiercc::pattern {

class KnomialTree {
 public:
  KnomialTree(int p, int root, int radix);

  int size() const { return p_; }
  int root() const { return root_; }
  int radix() const { return radix_; }
  /// Rounds of a broadcast or reduce: ceil(log_radix p); 0 for p == 1.
  int levels() const { return levels_; }
  /// radix^level, for level <= levels().
  long long distance(int level) const { return pow_[level]; }

  /// (i - root) mod p.
  int relative(int i) const;
  /// The rank with relative rank rel.
  int absolute(int rel) const;
  /// The level at which rank i receives from its parent; levels() for the root.
  int level(int i) const;
  /// Parent of rank i; -1 for the root.
  int parent(int i) const;
  /// Child of rank i at `level` (< level(i)) with digit c in [1, radix), or -1 past p.
  int child(int i, int level, int digit) const;
  /// Number of children of rank i.
  int numChildren(int i) const;
  /// Edges from the root to rank i: the non-zero base-radix digits of its relative rank.
  int depth(int i) const;

 private:
  int p_, root_, radix_, levels_ = 0;
  std::array<long long, 64> pow_{};  // radix^l for l <= levels_ (levels_ < 63 for any int p)
};

}  // namespace tiercc::pattern
