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

#include "plan/pattern/pattern.hpp"

namespace tiercc::pattern {

class KnomialTree {
 public:
  KnomialTree(int p, int root, int radix) : p_(p), root_(root), radix_(radix) {
    pow_[0] = 1;
    while (pow_[levels_] < p_) {
      pow_[levels_ + 1] = pow_[levels_] * radix_;
      ++levels_;
    }
  }

  /// Rounds of a broadcast or reduce: ceil(log_radix p); 0 for p == 1.
  int levels() const { return levels_; }

  /// (i - root) mod p.
  int relative(int i) const { return wrap(static_cast<long long>(i) - root_, p_); }
  /// The rank with relative rank rel.
  int absolute(int rel) const { return wrap(static_cast<long long>(rel) + root_, p_); }
  /// The level at which rank i receives from its parent; levels() for the root.
  int level(int i) const {
    int rel = relative(i);
    if (rel == 0) return levels_;
    int l = 0;
    while (rel % radix_ == 0) {
      rel /= radix_;
      ++l;
    }
    return l;
  }
  /// Parent of rank i; -1 for the root.
  int parent(int i) const {
    const int rel = relative(i);
    if (rel == 0) return -1;
    const long long d = pow_[level(i)];
    return absolute(static_cast<int>(rel - (rel / d) % radix_ * d));
  }
  /// Child of rank i at level `lvl` (< level(i)) with digit c in [1, radix), or -1 past p.
  int child(int i, int lvl, int digit) const {
    const long long rel = relative(i) + digit * pow_[lvl];
    return rel < p_ ? absolute(static_cast<int>(rel)) : -1;
  }
  /// Number of children of rank i.
  int numChildren(int i) const {
    int n = 0;
    for (int l = 0; l < level(i); ++l)
      for (int c = 1; c < radix_; ++c)
        if (child(i, l, c) >= 0) ++n;
    return n;
  }
  /// Edges from the root to rank i: the non-zero base-radix digits of its relative rank.
  int depth(int i) const {
    int n = 0;
    for (int rel = relative(i); rel > 0; rel /= radix_) n += rel % radix_ != 0;
    return n;
  }

 private:
  int p_, root_, radix_, levels_ = 0;
  std::array<long long, 64> pow_{};  // radix^l for l <= levels_ (levels_ < 63 for any int p)
};

}  // namespace tiercc::pattern
