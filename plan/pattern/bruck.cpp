// Bruck pattern math (see bruck.hpp).
#include "plan/pattern/bruck.hpp"

#include <algorithm>

namespace tiercc::pattern {

BruckAllgatherStep bruckAllgatherStep(int p, int i, int step) {
  const long long d = 1LL << step;
  BruckAllgatherStep s;
  s.sendTo = wrap(i - d, p);
  s.recvFrom = wrap(i + d, p);
  s.firstSent = i;
  s.firstReceived = wrap(i + d, p);
  s.count = static_cast<int>(std::min<long long>(d, p - d));
  return s;
}

int bruckAlltoallBlocks(int p, int step) {
  // In every period of 2^(k+1) positions the upper 2^k have bit k set.
  const long long d = 1LL << step, period = 2 * d;
  return static_cast<int>(p / period * d + std::max<long long>(0, p % period - d));
}

int bruckAlltoallMaxBlocks(int p) {
  int most = 0;
  for (int k = 0; k < bruckSteps(p); ++k) most = std::max(most, bruckAlltoallBlocks(p, k));
  return most;
}

}  // namespace tiercc::pattern
