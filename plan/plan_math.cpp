// Crossing counts for the plan builders (see plan_math.hpp).
#include "plan/plan_math.hpp"

#include "plan/pattern/knomial.hpp"
#include "plan/pattern/pattern.hpp"

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
  const pattern::KnomialTree tree(p, root, radix);  // the tree the runtime's k-nomial runs on
  int n = 0;
  for (int i = 0; i < p; ++i)
    if (i != root && s.domainOf[i] != s.domainOf[tree.parent(i)]) ++n;
  return n;
}

int knomialDepth(int p, int radix) { return pattern::KnomialTree(p, 0, radix).levels(); }

int floorPow2(int p) { return pattern::floorPow2(p); }

int ceilLog2(int p) { return pattern::ceilLog2(p); }

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
