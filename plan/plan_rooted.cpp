// Broadcast and reduce plans: S is the vector's size; every non-root domain must receive it
// once (broadcast) or send its partial once (reduce).
#include "plan/builders.hpp"
#include "plan/plan_math.hpp"

namespace tiercc::plans {
namespace {

using namespace planmath;

// The root's domain stages the data and its rails carry one slice each to every other domain
// (broadcast.cpp); reduce is the mirror image (reduce.cpp).
void hierarchical(Plan& plan, const Request& req, const Shape& s, bool reduce) {
  const std::uint64_t S = plan.bytes, D = s.numDomains(), rails = s.minDomainSize();
  const double rounds = static_cast<double>(std::max<std::uint64_t>(1, ceilDiv(S, req.windowBytes)));
  std::uint64_t inside = 0;
  for (int k : s.domainSizes) inside += static_cast<std::uint64_t>(k - 1) * S;
  const Step domainStep =
      patternStep(reduce ? "reduce in each domain (direct)" : "copy from the windows in each domain", rounds, double(S),
                  0, inside, false);
  if (reduce) plan.steps.push_back(domainStep);
  if (D > 1)
    plan.steps.push_back(patternStep(reduce ? "each rail sends its slice to the root's domain"
                                            : "each rail of the root's domain sends its slice to every domain",
                                     rounds, double(reduce ? S / rails : (D - 1) * S / rails), (D - 1) * S, 0, true));
  if (!reduce) plan.steps.push_back(domainStep);
}

// A k-nomial tree over all ranks, rooted at the root: ceil(log_k p) levels; the root sends (or
// receives) radix - 1 messages of S per level.
void knomial(Plan& plan, const Request& req, const Shape& s, bool reduce) {
  const std::uint64_t S = plan.bytes, p = s.size(), radix = std::max(2, req.radix);
  const std::uint64_t depth = knomialDepth(static_cast<int>(p), static_cast<int>(radix));
  const std::uint64_t cross = knomialCrossings(s, req.root, static_cast<int>(radix));
  const double fragments = static_cast<double>(std::max<std::uint64_t>(1, ceilDiv(S, req.windowBytes)));
  plan.steps.push_back(patternStep(
      (reduce ? "k-nomial reduce, radix " : "k-nomial broadcast, radix ") + std::to_string(radix),
      double(depth) * fragments, double(depth * (radix - 1) * S), cross * S, (p - 1 - cross) * S, cross > 0));
}

}  // namespace

void rooted(Plan& plan, const std::string& algorithm, const Request& req, const Shape& shape) {
  const bool reduce = req.coll == Collective::Reduce;
  if (algorithm == "hierarchical")
    hierarchical(plan, req, shape, reduce);
  else if (algorithm == "knomial")
    knomial(plan, req, shape, reduce);
}

}  // namespace tiercc::plans
