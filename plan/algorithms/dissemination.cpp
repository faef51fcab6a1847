// Dissemination barrier: in round k every rank signals the rank 2^k after it and waits for the
// rank 2^k before it, with empty messages. After ceil(log2 p) rounds every rank has heard,
// directly or not, from every other.
#include "plan/algorithms/algorithms.hpp"
#include "plan/build.hpp"
#include "plan/pattern/bruck.hpp"

namespace tiercc::plans {

void disseminationBarrier(Plan& plan, const Request&, const Shape& s) {
  const int p = s.size();
  cutFragments(plan, 1, 1);
  Step& st = addStep(plan, StepKind::Dissemination, Tier::ScaleUp, Group::World, "dissemination, empty messages");
  st.latencySteps = pattern::bruckSteps(p);
  bool crosses = false;
  for (int k = 0; k < pattern::bruckSteps(p); ++k)
    for (int r = 0; r < p; ++r) crosses |= s.domainOf[r] != s.domainOf[pattern::disseminationSendTo(p, r, k)];
  flatTier(st, crosses);
}

}  // namespace tiercc::plans
