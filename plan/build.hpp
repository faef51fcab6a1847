// What the plan builders share (internal to plan/): cutting a call into fragments, adding
// steps, and counting a pattern's bytes by tier. Every count is exact: the executor's
// statistics must equal it (ExecutedStepsMatchThePlan), so sums go over the fragments' real
// sizes and the partitions' real parts, never over averages.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

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

/// The sum of f(n) over the plan's fragments, n being each one's element count (at most two
/// distinct sizes: the full ones and the last).
template <class F>
double sumOverFragments(const Plan& plan, F f) {
  if (plan.fragments == 0) return 0;
  const std::size_t last = plan.count - (plan.fragments - 1) * plan.fragmentCount;
  return double(plan.fragments - 1) * double(f(plan.fragmentCount)) + double(f(last));
}
template <class F>
std::uint64_t countOverFragments(const Plan& plan, F f) {
  if (plan.fragments == 0) return 0;
  const std::size_t last = plan.count - (plan.fragments - 1) * plan.fragmentCount;
  return (plan.fragments - 1) * static_cast<std::uint64_t>(f(plan.fragmentCount)) + static_cast<std::uint64_t>(f(last));
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

/// Appends a step that comes after the previous one (Step::after).
Step& addStep(Plan& plan, StepKind kind, Tier tier, Group group, std::string what);

/// Bytes moved between two ranks, added to the step's tier totals by where they are.
inline void addTransfer(Step& st, const Shape& s, int from, int to, std::uint64_t bytes) {
  (s.domainOf[from] == s.domainOf[to] ? st.scaleUpBytes : st.scaleOutBytes) += bytes;
}
/// A flat pattern's step over the transport: paced by the scale-out tier if any of its
/// messages crosses domains.
void flatTier(Step& st, bool crosses);
/// Calls f(n, times) for each distinct fragment size n, `times` fragments having it.
template <class F>
void forEachFragmentSize(const Plan& plan, F f) {
  if (plan.fragments == 0) return;
  const std::size_t last = plan.count - (plan.fragments - 1) * plan.fragmentCount;
  if (last == plan.fragmentCount) return f(last, std::uint64_t(plan.fragments));
  f(plan.fragmentCount, std::uint64_t(plan.fragments - 1));
  f(last, std::uint64_t(1));
}
/// The flat algorithms' scratch: a message received into the receive scratch, and (with
/// `withAccumulate`) one packed or accumulated in the accumulate scratch.
std::size_t flatScratchElements(const Request& req, const Shape& s, bool withAccumulate);

/// Pairs of (sender, receiver) ranks in different domains, and in the same one (without self).
std::uint64_t crossPairs(const Shape& s);
std::uint64_t insidePairs(const Shape& s);

// The steps every hierarchical plan begins or ends with.
/// Direct paths, once per call: every rank publishes a descriptor of its buffers and reads its peers'.
void addAgree(Plan& plan);
/// Staged path: every rank (or only the root) copies `localBytes` of input into its window per call.
Step& addStage(Plan& plan, Pieces pieces, double localBytes);
/// Holders raise Reduced once their pieces are in place (staged: copying `localBytes` there first).
Step& addPublish(Plan& plan, Pieces pieces, double localBytes);
/// Direct paths, once per call: the closing barrier.
void addClose(Plan& plan);

/// Who sends to whom, for tiercc-sim's exact mode.
inline void describeExchange(Step& st, Exchange exchange, double messageBytes, int param = 0) {
  st.exchange = exchange;
  st.messageBytes = messageBytes;
  st.exchangeParam = param;
}

}  // namespace tiercc::plans
