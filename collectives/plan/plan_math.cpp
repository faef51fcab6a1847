// Crossing counts for the plan builders (see plan_math.hpp).
#include "collectives/plan/plan_math.hpp"

namespace tiercc::planmath {

int ringCrossings(const Shape& s) {
  const int p = s.size();
  int n = 0;
  for (int r = 0; r < p && p > 1; ++r)
    if (s.domainOf[r] != s.domainOf[(r + 1) % p]) ++n;
  return n;
}

int shiftCrossings(const Shape& s, int distance) {
  const int p = s.size();
  int n = 0;
  for (int r = 0; r < p; ++r)
    if (s.domainOf[r] != s.domainOf[((r - distance) % p + p) % p]) ++n;
  return n;
}

int knomialCrossings(const Shape& s, int root, int radix) {
  const int p = s.size();
  int n = 0;
  for (int rel = 1; rel < p; ++rel) {
    // The parent clears the lowest non-zero base-radix digit.
    int place = 1;
    while ((rel / place) % radix == 0) place *= radix;
    const int parentRel = rel - ((rel / place) % radix) * place;
    if (s.domainOf[(rel + root) % p] != s.domainOf[(parentRel + root) % p]) ++n;
  }
  return n;
}

int knomialDepth(int p, int radix) {
  int depth = 0;
  for (long long reach = 1; reach < p; reach *= radix) ++depth;
  return depth;
}

int floorPow2(int p) {
  int v = 1;
  while (v * 2 <= p) v *= 2;
  return v;
}

int ceilLog2(int p) {
  int n = 0;
  while ((1LL << n) < p) ++n;
  return n;
}

Step patternStep(std::string what, double latencySteps, double busiestBytes, std::uint64_t crossingBytes,
                 std::uint64_t localBytes, bool anyCrossing) {
  Step st;
  st.what = std::move(what);
  st.tier = anyCrossing ? Tier::ScaleOut : Tier::ScaleUp;
  st.latencySteps = latencySteps;
  st.busiestBytes = busiestBytes;
  st.scaleOutBytes = crossingBytes;
  st.scaleUpBytes = localBytes;
  return st;
}

}  // namespace tiercc::planmath
