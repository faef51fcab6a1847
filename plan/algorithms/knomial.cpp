// K-nomial trees over all ranks, rooted at the root (pattern::KnomialTree): ceil(log_k p)
// levels for any p, root and radix k >= 2; latency-optimal for small messages, pipelined by
// fragments for larger ones (a rank forwards fragment f while its parent sends f + 1). Every
// tree edge carries the data once: broadcast down, reduce up.
#include "plan/pattern/knomial.hpp"

#include "core/errors.hpp"
#include "plan/build.hpp"

namespace tiercc::plans {
namespace {

void knomial(Plan& plan, const Request& req, const Shape& s, bool reduce) {
  if (req.radix < 2) fail(ErrorCode::InvalidArgument, "the k-nomial radix must be at least 2, got ", req.radix);
  const std::size_t es = dataTypeSize(req.dt);
  const int p = s.size();
  const pattern::KnomialTree tree(p, req.root, req.radix);
  cutFragments(plan, flatScratchElements(req, s, reduce), 1);
  Step& st =
      addFlatStep(plan, reduce ? StepKind::KnomialReduce : StepKind::KnomialBroadcast,
                  (reduce ? "k-nomial reduce, radix " : "k-nomial broadcast, radix ") + std::to_string(req.radix));
  st.finalizes = reduce;
  st.param = req.radix;
  for (int i = 0; i < p; ++i)
    if (i != req.root) addTransfer(st, s, reduce ? i : tree.parent(i), reduce ? tree.parent(i) : i, plan.count * es);
  st.latencySteps = double(tree.levels()) * plan.fragments;
  st.busiestBytes = double(tree.levels() * (req.radix - 1) * plan.count * es);  // the root, every level
}

}  // namespace

void knomialBroadcast(Plan& plan, const Request& req, const Shape& s) { knomial(plan, req, s, false); }
void knomialReduce(Plan& plan, const Request& req, const Shape& s) { knomial(plan, req, s, true); }

}  // namespace tiercc::plans
