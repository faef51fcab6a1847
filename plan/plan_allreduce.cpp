// Allreduce plans. S is the vector's size in bytes, D the number of domains, k_d their sizes
// and rails = the smallest k_d (ranks beyond it have no rail peer in every domain).
#include "plan/pattern/halving_doubling.hpp"
#include "plan/builders.hpp"
#include "plan/plan_math.hpp"

namespace tiercc::plans {
namespace {

using namespace planmath;

// Reduce-scatter inside each domain, allreduce along each rail, allgather inside each domain;
// one round per window of data, or across domains per half window with two rounds in flight
// (allreduce.cpp).
void hierarchical(Plan& plan, const Request& req, const Shape& s) {
  const std::uint64_t S = plan.bytes, D = s.numDomains(), rails = s.minDomainSize(), kmax = s.maxDomainSize();
  const std::uint64_t es = dataTypeSize(req.dt), slots = D > 1 ? 2 : 1;
  const double rounds = static_cast<double>(ceilDiv(S, req.windowBytes / slots / es * es));
  if (D > 1) plan.pipelinedRounds = rounds;
  std::uint64_t inside = 0;
  for (int k : s.domainSizes) inside += static_cast<std::uint64_t>(k - 1) * S;
  Step rs =
      patternStep("reduce-scatter in each domain (direct)", rounds, double(kmax - 1) * S / rails, 0, inside, false);
  plan.steps.push_back(withExchange(rs, Exchange::InDomain, double(S) / rails));
  if (D > 1)
    plan.steps.push_back(
        withExchange(patternStep("allreduce along each of " + std::to_string(rails) + " rails (direct)", 2 * rounds,
                                 2.0 * (D - 1) / D * S / rails, 2 * (D - 1) * S, 0, true),
                     Exchange::Rail, 2.0 / D * S / rails));
  // Owners of a slice read the others' slices; ranks beyond the rails own none and read all.
  const double gathered = kmax > rails ? double(S) : double(S) - double(S) / rails;
  plan.steps.push_back(
      withExchange(patternStep("allgather in each domain (direct)", rounds, gathered, 0, inside, false),
                   Exchange::InDomain, double(S) / rails));
}

// Every rank reduces all of its domain's windows, then exchanges the domain result with its
// rail peers (allreduce_oneshot.cpp). Uniform domains only.
void oneShot(Plan& plan, const Shape& s) {
  const std::uint64_t S = plan.bytes, D = s.numDomains(), N = s.size(), k = s.maxDomainSize();
  plan.steps.push_back(withExchange(
      patternStep("every rank reduces its domain (direct)", 1, double(k - 1) * S, 0, N * (k - 1) * S, false),
      Exchange::InDomain, double(S)));
  if (D > 1)
    plan.steps.push_back(
        withExchange(patternStep("exchange along rails (direct)", 1, double(D - 1) * S, N * (D - 1) * S, 0, true),
                     Exchange::Rail, double(S)));
}

// Ring over all ranks in rank order: reduce-scatter then allgather, p - 1 steps each, every
// rank sending one block per step to its successor.
void ring(Plan& plan, const Request& req, const Shape& s) {
  const std::uint64_t S = plan.bytes, p = s.size(), cross = ringCrossings(s);
  const std::uint64_t perRank = S - S / p;  // p - 1 blocks of S / p (exact when p divides S)
  const double fragments = std::max<std::uint64_t>(1, ceilDiv(ceilDiv(S, p), req.windowBytes));
  for (const char* phase : {"ring reduce-scatter over all ranks", "ring allgather over all ranks"})
    plan.steps.push_back(withExchange(patternStep(phase, double(p - 1) * fragments, double(perRank), cross * perRank,
                                                  (p - cross) * perRank, cross > 0),
                                      Exchange::Ring, double(perRank)));
}

// Butterflies over the largest power of two p2 <= p; the r = p - p2 extra ranks first fold
// into a partner and get the result back at the end (the runtime's pattern::Butterfly: the
// even ranks below 2r fold into their odd neighbour).
void butterfly(Plan& plan, const Request& req, const Shape& s, bool halving) {
  const std::uint64_t S = plan.bytes;
  const pattern::Butterfly bf(s.size());
  const int p2 = bf.participants(), extra = bf.extra();
  auto real = [&bf](int v) { return bf.realRank(v); };
  const double fragments = std::max<std::uint64_t>(1, ceilDiv(halving ? S / 2 : S, req.windowBytes));
  int foldCross = 0;
  for (int i = 0; i < extra; ++i) foldCross += s.domainOf[2 * i] != s.domainOf[2 * i + 1];
  if (extra > 0)
    plan.steps.push_back(
        withExchange(patternStep("fold " + std::to_string(extra) + " extra ranks into partners", fragments, double(S),
                                 foldCross * S, (extra - foldCross) * S, foldCross > 0),
                     Exchange::Fold, double(S), 0));
  // Halving sends half of what is left at each step (distance 1 first, so the largest halves
  // stay closest); doubling on the whole vector sends all of it at each step.
  std::uint64_t chunk = halving ? S / 2 : S;
  std::vector<Step> gather;
  for (int mask = 1; mask < p2; mask <<= 1) {
    const std::uint64_t cross = butterflyCrossings(s, p2, mask, real);
    Step st = patternStep(
        (halving ? "halving exchange at distance " : "doubling exchange at distance ") + std::to_string(mask),
        fragments, double(chunk), cross * chunk, (p2 - cross) * chunk, cross > 0);
    st = withExchange(st, Exchange::Butterfly, double(chunk), mask);
    plan.steps.push_back(st);
    if (halving) {
      st.what = "doubling allgather at distance " + std::to_string(mask);
      gather.insert(gather.begin(), st);
      chunk /= 2;
    }
  }
  plan.steps.insert(plan.steps.end(), gather.begin(), gather.end());
  if (extra > 0)
    plan.steps.push_back(withExchange(patternStep("return results to folded ranks", fragments, double(S), foldCross * S,
                                                  (extra - foldCross) * S, foldCross > 0),
                                      Exchange::Fold, double(S), 1));
}

}  // namespace

void allreduce(Plan& plan, const std::string& algorithm, const Request& req, const Shape& shape) {
  if (algorithm == "hierarchical")
    hierarchical(plan, req, shape);
  else if (algorithm == "one_shot")
    oneShot(plan, shape);
  else if (algorithm == "ring")
    ring(plan, req, shape);
  else if (algorithm == "halving_doubling")
    butterfly(plan, req, shape, true);
  else if (algorithm == "recursive_doubling")
    butterfly(plan, req, shape, false);
}

}  // namespace tiercc::plans
