// K-nomial tree pattern math (see knomial.hpp).
#include "plan/pattern/knomial.hpp"

#include "plan/pattern/pattern.hpp"

namespace tiercc::pattern {

KnomialTree::KnomialTree(int p, int root, int radix) : p_(p), root_(root), radix_(radix) {
  pow_[0] = 1;
  while (pow_[levels_] < p_) {
    pow_[levels_ + 1] = pow_[levels_] * radix_;
    ++levels_;
  }
}

int KnomialTree::relative(int i) const { return wrap(static_cast<long long>(i) - root_, p_); }
int KnomialTree::absolute(int rel) const { return wrap(static_cast<long long>(rel) + root_, p_); }

int KnomialTree::level(int i) const {
  int rel = relative(i);
  if (rel == 0) return levels_;
  int l = 0;
  while (rel % radix_ == 0) {
    rel /= radix_;
    ++l;
  }
  return l;
}

int KnomialTree::parent(int i) const {
  const int rel = relative(i);
  if (rel == 0) return -1;
  const long long d = pow_[level(i)];
  return absolute(static_cast<int>(rel - (rel / d) % radix_ * d));
}

int KnomialTree::child(int i, int lvl, int digit) const {
  const long long rel = relative(i) + digit * pow_[lvl];
  return rel < p_ ? absolute(static_cast<int>(rel)) : -1;
}

int KnomialTree::numChildren(int i) const {
  int n = 0;
  for (int l = 0; l < level(i); ++l)
    for (int c = 1; c < radix_; ++c)
      if (child(i, l, c) >= 0) ++n;
  return n;
}

int KnomialTree::depth(int i) const {
  int n = 0;
  for (int rel = relative(i); rel > 0; rel /= radix_) n += rel % radix_ != 0;
  return n;
}

}  // namespace tiercc::pattern
