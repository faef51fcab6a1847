// Reduce-scatter and allgather plans. B is one rank's block in bytes, S = N x B the whole
// vector; each domain must receive (allgather) or send (reduce-scatter) every remote block once.
#include "plan/builders.hpp"
#include "plan/plan_math.hpp"

namespace tiercc::plans {
namespace {

using namespace planmath;

// Inside each domain, then one message per remote block along the rail that serves it
// (allgather.cpp, reduce_scatter.cpp).
void hierarchical(Plan& plan, const Request& req, const Shape& s, bool reduce) {
  const std::uint64_t B = req.count * dataTypeSize(req.dt), N = s.size(), D = s.numDomains();
  const std::uint64_t rails = s.minDomainSize(), kmax = s.maxDomainSize();
  const double rounds = static_cast<double>(
      std::max<std::uint64_t>(1, ceilDiv(B * (1 + (D - 1) * ceilDiv(kmax, rails)), req.windowBytes)));
  std::uint64_t readPeers = 0;  // reduce: every rank's copy of every block, read by its reducer
  for (int k : s.domainSizes) readPeers += static_cast<std::uint64_t>(k - 1) * N * B;
  const std::uint64_t remoteBlocks = N - s.minDomainSize();
  if (reduce) {
    plan.steps.push_back(withExchange(patternStep("reduce every block in each domain (direct)", rounds,
                                                  double((kmax - 1) * N * B) / rails, 0, readPeers, false),
                                      Exchange::InDomain, double(N * B) / rails));
    if (D > 1)
      plan.steps.push_back(withExchange(patternStep("send each remote block's partial along its rail", rounds,
                                                    double(ceilDiv(remoteBlocks, rails) * B), (D - 1) * N * B, 0, true),
                                        Exchange::Rail, double(B)));
    plan.steps.push_back(
        patternStep("combine the partials of each block in its domain", rounds, double((D - 1) * B), 0, N * B, false));
  } else {
    if (D > 1)
      plan.steps.push_back(
          withExchange(patternStep("send the domain's blocks along the rails", rounds,
                                   double(ceilDiv(kmax, rails) * (D - 1) * B), (D - 1) * N * B, 0, true),
                       Exchange::Rail, double(B)));
    plan.steps.push_back(patternStep("copy every block out of the domain's windows", rounds, double((N - 1) * B), 0,
                                     N * (N - 1) * B, false));
  }
}

// Ring in rank order: p - 1 steps of one block to the successor.
void ring(Plan& plan, const Request& req, const Shape& s, bool reduce) {
  const std::uint64_t B = req.count * dataTypeSize(req.dt), p = s.size(), cross = ringCrossings(s);
  const double fragments = static_cast<double>(std::max<std::uint64_t>(1, ceilDiv(B, req.windowBytes)));
  plan.steps.push_back(
      withExchange(patternStep(reduce ? "ring reduce-scatter over all ranks" : "ring allgather over all ranks",
                               double(p - 1) * fragments, double((p - 1) * B), cross * (p - 1) * B,
                               (p - cross) * (p - 1) * B, cross > 0),
                   Exchange::Ring, double((p - 1) * B)));
}

// Bruck: step i sends min(2^i, p - 2^i) blocks to rank - 2^i.
void bruck(Plan& plan, const Request& req, const Shape& s) {
  const std::uint64_t B = req.count * dataTypeSize(req.dt), p = s.size();
  for (std::uint64_t dist = 1; dist < p; dist <<= 1) {
    const std::uint64_t blocks = std::min(dist, p - dist), cross = shiftCrossings(s, static_cast<int>(dist));
    const double fragments = static_cast<double>(std::max<std::uint64_t>(1, ceilDiv(blocks * B, req.windowBytes)));
    plan.steps.push_back(
        withExchange(patternStep("bruck step at distance " + std::to_string(dist), fragments, double(blocks * B),
                                 cross * blocks * B, (p - cross) * blocks * B, cross > 0),
                     Exchange::Shift, double(blocks * B), -static_cast<int>(dist)));
  }
}

}  // namespace

void reduceScatterOrAllgather(Plan& plan, const std::string& algorithm, const Request& req, const Shape& shape) {
  const bool reduce = req.coll == Collective::ReduceScatter;
  if (algorithm == "hierarchical")
    hierarchical(plan, req, shape, reduce);
  else if (algorithm == "ring")
    ring(plan, req, shape, reduce);
  else if (algorithm == "bruck")
    bruck(plan, req, shape);
}

}  // namespace tiercc::plans
