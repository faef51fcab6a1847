// Ring algorithms over all ranks in rank order, every message to the ring successor:
// reduce-scatter, allgather, and allreduce as the two in a row. p - 1 rounds per phase and
// fragment; each rank sends (p-1)/p of the data per phase, whatever p is. Most of it crosses
// the slow tier when domains are contiguous: the baseline the hierarchical plans beat.
#include "plan/build.hpp"

namespace tiercc::plans {
namespace {

// A ring phase: rank r sends bytes(r, n) to r + 1 per fragment of n elements, in p - 1 rounds.
template <class Bytes>
Step& ringStep(Plan& plan, const Shape& s, StepKind kind, const char* what, Bytes bytes) {
  const int p = s.size();
  Step& st = addFlatStep(plan, kind, what);
  forEachFragmentSize(plan, [&](std::size_t n, std::uint64_t times) {
    std::uint64_t most = 0;
    for (int r = 0; r < p; ++r) {
      const std::uint64_t sent = bytes(r, n);
      addTransfer(st, s, r, (r + 1) % p, times * sent);
      most = std::max(most, sent);
    }
    st.busiestBytes += double(times * most);
  });
  st.latencySteps = double(p - 1) * plan.fragments;
  // tiercc-sim's exact mode gives every message the average; the busiest rank's is above it by
  // at most the partition's remainder.
  describeExchange(st, Exchange::Ring, double(st.scaleUpBytes + st.scaleOutBytes) / p);
  return st;
}

}  // namespace

// Allreduce: blocks are the p parts of each fragment; a rank sends every block but its own in
// the reduce-scatter, and every block but its successor's in the allgather.
void ringAllreduce(Plan& plan, const Request& req, const Shape& s) {
  const std::size_t es = dataTypeSize(req.dt), p = s.size();
  cutFragments(plan, flatScratchElements(req, s, false) * p, 1);
  ringStep(plan, s, StepKind::RingReduceScatter, "ring reduce-scatter over all ranks", [&](int r, std::size_t n) {
    return (n - partSize(n, p, r)) * es;
  }).finalizes = true;
  ringStep(plan, s, StepKind::RingAllgather, "ring allgather over all ranks",
           [&](int r, std::size_t n) { return (n - partSize(n, p, (r + 1) % p)) * es; });
}

// Reduce-scatter: each round passes on a partial of one block's fragment.
void ringReduceScatter(Plan& plan, const Request& req, const Shape& s) {
  const std::size_t es = dataTypeSize(req.dt), p = s.size();
  cutFragments(plan, flatScratchElements(req, s, true), 1);
  Step& st = ringStep(plan, s, StepKind::RingReduceScatter, "ring reduce-scatter over all ranks",
                      [&](int, std::size_t n) { return (p - 1) * n * es; });
  st.finalizes = true;
}

// Allgather: whole blocks straight into the output; no scratch, one fragment.
void ringAllgather(Plan& plan, const Request& req, const Shape& s) {
  const std::size_t es = dataTypeSize(req.dt), p = s.size();
  cutFragments(plan, plan.count, 1);
  ringStep(plan, s, StepKind::RingAllgather, "ring allgather over all ranks",
           [&](int, std::size_t n) { return (p - 1) * n * es; });
}

}  // namespace tiercc::plans
