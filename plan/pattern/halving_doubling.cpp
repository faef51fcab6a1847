// Butterfly pattern math (see halving_doubling.hpp).
#include "plan/pattern/halving_doubling.hpp"

#include "plan/pattern/pattern.hpp"

namespace tiercc::pattern {

Butterfly::Butterfly(int p) : p_(p), p2_(floorPow2(p)), extra_(p - p2_), steps_(ceilLog2(p2_)) {}

BlockRange Butterfly::heldBefore(int v, int step) const {
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

BlockRange Butterfly::kept(int v, int step) const {
  BlockRange r = heldBefore(v, step);
  const int half = r.size() / 2;
  return (v & (1 << step)) ? BlockRange{r.begin + half, r.end} : BlockRange{r.begin, r.end - half};
}

BlockRange Butterfly::sent(int v, int step) const {
  BlockRange r = heldBefore(v, step);
  const int half = r.size() / 2;
  return (v & (1 << step)) ? BlockRange{r.begin, r.begin + half} : BlockRange{r.end - half, r.end};
}

int Butterfly::ownedBlock(int v) const {
  int b = 0;
  for (int s = 0; s < steps_; ++s)
    if (v & (1 << s)) b |= 1 << (steps_ - 1 - s);
  return b;
}

}  // namespace tiercc::pattern
