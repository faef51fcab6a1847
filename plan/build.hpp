// What the plan builders share, and the builders (internal to plan/): cutting a call into
// fragments, adding steps, and counting a pattern's bytes by tier. Every count is exact: the executor's
// statistics must equal it (ExecutedStepsMatchThePlan), so sums go over the fragments' real
// sizes and the partitions' real parts, never over averages.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "plan/pattern/pattern.hpp"
#include "plan/plan.hpp"

namespace tiercc::plans {

inline std::uint64_t ceilDiv(std::uint64_t a, std::uint64_t b) { return b ? (a + b - 1) / b : 0; }

/// Cuts plan.count elements of each block into fragments of at most `capacity` elements, `slots`
/// of them in flight. A capacity of 0 (not even one element per block fits) makes the plan unfit.
void cutFragments(Plan& plan, std::size_t capacity, std::uint32_t slots);

/// One fragment of the whole call, even of zero elements (its messages travel anyway).
inline void oneFragment(Plan& plan) {
  plan.fragmentCount = plan.count;
  plan.fragments = 1;
  plan.slots = 1;
}

/// Calls f(n, times) for each distinct fragment size n, `times` fragments having it (at most
/// two: the full ones and the last).
template <class F>
void forEachFragmentSize(const Plan& plan, F f) {
  if (plan.fragments == 0) return;
  const std::size_t last = plan.count - (plan.fragments - 1) * plan.fragmentCount;
  if (last == plan.fragmentCount) return f(last, std::uint64_t(plan.fragments));
  f(plan.fragmentCount, std::uint64_t(plan.fragments - 1));
  f(last, std::uint64_t(1));
}
/// The sum of f(n) over the plan's fragments, n being each one's element count.
template <class F>
double sumOverFragments(const Plan& plan, F f) {
  double sum = 0;
  forEachFragmentSize(plan, [&](std::size_t n, std::uint64_t times) { sum += double(times) * double(f(n)); });
  return sum;
}

/// Size of part i of n split into `parts` (pattern::partition).
inline std::size_t partSize(std::size_t n, std::size_t parts, std::size_t i) {
  auto [b, e] = pattern::partition(n, parts, i);
  return e - b;
}

/// Local ranks l < k with l % rails == rail: the ranks of a domain of k that rail `rail` serves.
inline std::size_t railServes(int k, int rail, int rails) {
  return rail < k ? static_cast<std::size_t>((k - rail + rails - 1) / rails) : 0;
}

/// For each rail j, the ranks it serves in all domains together: the sum of railServes.
inline std::vector<std::size_t> railTotals(const Shape& s) {
  const int rails = s.minDomainSize();
  std::vector<std::size_t> totals(static_cast<std::size_t>(rails), 0);
  for (int k : s.domainSizes)
    for (int j = 0; j < rails; ++j) totals[j] += railServes(k, j, rails);
  return totals;
}

/// Appends a step that comes after the previous one (Step::after), on the plan's path. Along
/// the rails it is paced by the scale-out tier, elsewhere by the scale-up tier.
Step& addStep(Plan& plan, StepKind kind, Group group, std::string what, Pieces pieces = Pieces::None,
              Buffer in = Buffer::None, Buffer out = Buffer::None);
/// A flat pattern's step among all ranks over the transport: paced by the scale-up tier until
/// addTransfer counts a message that crosses domains.
Step& addFlatStep(Plan& plan, StepKind kind, std::string what);
/// A message between two ranks, added to the step's tier totals by where they are.
inline void addTransfer(Step& st, const Shape& s, int from, int to, std::uint64_t bytes) {
  const bool crosses = s.domainOf[from] != s.domainOf[to];
  (crosses ? st.scaleOutBytes : st.scaleUpBytes) += bytes;
  if (crosses) st.tier = Tier::ScaleOut;
}
/// The flat algorithms' scratch: a message received into the receive scratch, and (with
/// `withAccumulate`) one packed or accumulated in the accumulate scratch.
std::size_t flatScratchElements(const Request& req, const Shape& s, bool withAccumulate);

/// The sum over domains of f(k), k being each one's size.
template <class F>
std::uint64_t overDomains(const Shape& s, F f) {
  std::uint64_t sum = 0;
  for (int k : s.domainSizes) sum += static_cast<std::uint64_t>(f(static_cast<std::uint64_t>(k)));
  return sum;
}
/// Pairs of (sender, receiver) ranks in different domains, and in the same one (without self).
inline std::uint64_t crossPairs(const Shape& s) {
  return overDomains(s, [&](std::uint64_t k) { return k * (s.size() - k); });
}
inline std::uint64_t insidePairs(const Shape& s) {
  return overDomains(s, [](std::uint64_t k) { return k * (k - 1); });
}

/// How every hierarchical plan begins: its fragments (`capacity` elements per block,
/// domainSlots in flight), its round protocol, and on a direct path the Agree step (with what it
/// reads of every rank's buffers, DirectNeeds), else the Stage step (copying `stagedBytes` into
/// the window per call).
void beginDomainPlan(Plan& plan, const Request& req, const Shape& s, std::size_t capacity, std::uint32_t directNeeds,
                     Pieces pieces, double stagedBytes);
/// Fragments in flight for a hierarchical plan: Request::slots (TIERCC_PIPELINE_SLOTS); unless
/// asked, across domains (where the tiers overlap) 2, inside one domain 1. buildAtBestDepth
/// prices deeper plans from there: inside one domain more slots let a broadcast's root stage
/// fragment j + 1 while the others copy fragment j (Step::runner).
inline std::uint32_t domainSlots(const Shape& s, const Request& req) {
  if (req.slots) return std::min(req.slots, kMaxSlots);
  return s.numDomains() <= 1 ? 1 : 2;
}
/// Holders raise Reduced once their pieces are in place (staged: copying `localBytes` there first).
Step& addPublish(Plan& plan, Pieces pieces, double localBytes);
/// Direct paths, once per call: the closing barrier (nothing on the staged path).
void endDomainPlan(Plan& plan);

/// Who sends to whom, for tiercc-sim's exact mode.
inline void describeExchange(Step& st, Exchange exchange, double messageBytes, int param = 0) {
  st.exchange = exchange;
  st.messageBytes = messageBytes;
  st.exchangeParam = param;
}

// The builders, one file per algorithm (family) in plan/algorithms/, named in registry.cpp. Each
// fills a plan whose common fields buildPlan set: its fragments, its round protocol and its steps.
// Hierarchical, rail-parallel: inside the domains, along the rails, inside again.
void hierarchicalAllreduce(Plan& plan, const Request& req, const Shape& shape);  // and barrier
void hierarchicalReduceScatter(Plan& plan, const Request& req, const Shape& shape);
void hierarchicalAllgather(Plan& plan, const Request& req, const Shape& shape);
void hierarchicalBroadcast(Plan& plan, const Request& req, const Shape& shape);
void hierarchicalReduce(Plan& plan, const Request& req, const Shape& shape);
void hierarchicalAlltoall(Plan& plan, const Request& req, const Shape& shape);
// Across domains block by block, straight from buffer to buffer: no packing.
void linearAlltoall(Plan& plan, const Request& req, const Shape& shape);
// Small messages: every rank reduces its whole domain, then the rails exchange results.
void oneShot(Plan& plan, const Request& req, const Shape& shape);  // allreduce and barrier
std::string oneShotUnsupported(const Request& req, const Shape& shape);
// Inside one domain: allgather, all-to-all and reduce-scatter, broadcast, reduce (what they cannot
// run: the same rules).
void oneShotGather(Plan& plan, const Request& req, const Shape& shape);          // and reduce-scatter
void oneShotRooted(Plan& plan, const Request& req, const Shape& shape);          // broadcast and reduce
std::string oneShotInDomainUnsupported(const Request& req, const Shape& shape);  // every one of them
/// What a one-shot allgather (its block), broadcast or reduce (the vector) or all-to-all and
/// reduce-scatter (all its blocks) rank stages.
std::size_t oneShotInputBytes(const Request& req, const Shape& shape);
// Flat patterns over the transport.
void ringAllreduce(Plan& plan, const Request& req, const Shape& shape);
void ringReduceScatter(Plan& plan, const Request& req, const Shape& shape);
void ringAllgather(Plan& plan, const Request& req, const Shape& shape);
void halvingDoublingAllreduce(Plan& plan, const Request& req, const Shape& shape);
void recursiveDoublingAllreduce(Plan& plan, const Request& req, const Shape& shape);
void knomialBroadcast(Plan& plan, const Request& req, const Shape& shape);
void knomialReduce(Plan& plan, const Request& req, const Shape& shape);
void bruckAllgather(Plan& plan, const Request& req, const Shape& shape);
void bruckAlltoall(Plan& plan, const Request& req, const Shape& shape);
void pairwiseAlltoall(Plan& plan, const Request& req, const Shape& shape);
void pairwiseAlltoallv(Plan& plan, const Request& req, const Shape& shape);
void disseminationBarrier(Plan& plan, const Request& req, const Shape& shape);
void pointToPoint(Plan& plan, const Request& req, const Shape& shape);  // send and recv

}  // namespace tiercc::plans
