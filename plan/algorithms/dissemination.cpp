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
  Step& st = addFlatStep(plan, StepKind::Dissemination, "dissemination, empty messages");
  st.latencySteps = pattern::bruckSteps(p);
  for (int k = 0; k < pattern::bruckSteps(p); ++k)
    for (int r = 0; r < p; ++r) addTransfer(st, s, r, pattern::disseminationSendTo(p, r, k), 0);
}

}  // namespace tiercc::plans
