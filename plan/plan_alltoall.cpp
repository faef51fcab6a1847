// All-to-all, all-to-allv and barrier plans. B is the block one rank sends to one peer.
#include "plan/builders.hpp"
#include "plan/plan_math.hpp"

namespace tiercc::plans {
namespace {

using namespace planmath;

std::uint64_t crossPairs(const Shape& s) {
  std::uint64_t n = 0;
  for (int k : s.domainSizes) n += static_cast<std::uint64_t>(k) * (s.size() - k);
  return n;
}

std::uint64_t insidePairs(const Shape& s) {
  std::uint64_t n = 0;
  for (int k : s.domainSizes) n += static_cast<std::uint64_t>(k) * (k - 1);
  return n;
}

// Packed by destination domain: one message per (rail, destination domain); across domains
// half-window rounds, two in flight (alltoall.cpp).
void hierarchical(Plan& plan, const Request& req, const Shape& s) {
  const std::uint64_t B = req.count * dataTypeSize(req.dt), N = s.size(), D = s.numDomains();
  const std::uint64_t rails = s.minDomainSize(), kmax = s.maxDomainSize(), slots = D > 1 ? 2 : 1;
  const double rounds = static_cast<double>(std::max<std::uint64_t>(1, ceilDiv(N * B * 2 * slots, req.windowBytes)));
  if (D > 1) plan.pipelinedRounds = rounds;
  plan.steps.push_back(
      patternStep("stage and pack by destination domain", rounds, double(N * B), 0, insidePairs(s) * B, false));
  if (D > 1)
    plan.steps.push_back(
        withExchange(patternStep("one message per (rail, destination domain)", rounds,
                                 double(kmax * ceilDiv(kmax, rails) * (D - 1) * B), crossPairs(s) * B, 0, true),
                     Exchange::Rail, double(kmax * B)));
}

// p - 1 steps: at step i rank r sends its block for r + i and receives from r - i.
void pairwise(Plan& plan, const std::uint64_t B, const Shape& s) {
  const std::uint64_t p = s.size(), cross = crossPairs(s);
  const double fragments = static_cast<double>(std::max<std::uint64_t>(1, ceilDiv(B, 4u << 20)));
  plan.steps.push_back(
      withExchange(patternStep("pairwise exchange, " + std::to_string(p - 1) + " steps", double(p - 1) * fragments,
                               double((p - 1) * B), cross * B, insidePairs(s) * B, cross > 0),
                   Exchange::All, double(B)));
}

// Bruck: step i sends every block whose index has bit i set to rank + 2^i.
void bruck(Plan& plan, const Request& req, const Shape& s) {
  const std::uint64_t B = req.count * dataTypeSize(req.dt), p = s.size();
  for (std::uint64_t dist = 1; dist < p; dist <<= 1) {
    std::uint64_t blocks = 0;
    for (std::uint64_t j = 0; j < p; ++j) blocks += (j & dist) != 0;
    const std::uint64_t cross = shiftCrossings(s, static_cast<int>(p - dist));  // to rank + dist
    plan.steps.push_back(
        withExchange(patternStep("bruck step at distance " + std::to_string(dist), 1, double(blocks * B),
                                 cross * blocks * B, (p - cross) * blocks * B, cross > 0),
                     Exchange::Shift, double(blocks * B), static_cast<int>(dist)));
  }
}

}  // namespace

void alltoallOrBarrier(Plan& plan, const std::string& algorithm, const Request& req, const Shape& s) {
  if (req.coll == Collective::Barrier) {
    const bool crosses = s.numDomains() > 1;
    if (algorithm == "one_shot" || algorithm == "hierarchical") {
      const double rounds = algorithm == "one_shot" ? 1 : 2;
      plan.steps.push_back(patternStep("flags in each domain", rounds, 0, 0, 0, false));
      // A one-byte allreduce: one-shot sends the byte to every rail peer, hierarchical
      // reduce-scatters and gathers it along one rail.
      const std::uint64_t D = s.numDomains(), sent = algorithm == "one_shot" ? s.size() * (D - 1) : 2 * (D - 1);
      if (crosses) plan.steps.push_back(patternStep("exchange along rails", rounds, 1, sent, 0, true));
    } else {
      plan.steps.push_back(patternStep("dissemination", ceilLog2(s.size()), 0, 0, 0, crosses));
    }
    return;
  }
  if (req.coll == Collective::AllToAllv) {
    // Counts are per rank: price the average block, and split the total by the share of
    // rank pairs that cross domains.
    const std::uint64_t N = s.size(), pairs = N * N;
    plan.steps.push_back(patternStep("pairwise exchange, " + std::to_string(N - 1) + " steps", double(N - 1),
                                     double(req.totalBytes) / N, req.totalBytes * crossPairs(s) / pairs,
                                     req.totalBytes * insidePairs(s) / pairs, s.numDomains() > 1));
    return;
  }
  const std::uint64_t B = req.count * dataTypeSize(req.dt);
  if (algorithm == "hierarchical")
    hierarchical(plan, req, s);
  else if (algorithm == "pairwise")
    pairwise(plan, B, s);
  else if (algorithm == "bruck")
    bruck(plan, req, s);
}

}  // namespace tiercc::plans
