// Bruck's allgather and all-to-all (pattern/bruck.hpp): ceil(log2 p) rounds at distance 2^k
// for any p, one message per round, for small messages where latency dominates. Each round
// packs the blocks it sends (a fragment of each) into the accumulate scratch and receives into
// the receive scratch, so a fragment is what the largest round's blocks fit.
#include "plan/pattern/bruck.hpp"

#include "plan/build.hpp"

namespace tiercc::plans {
namespace {

// Round k: every rank sends `blocks` fragments of blocks to rank + shift (mod p).
void bruckStep(Plan& plan, const Shape& s, StepKind kind, int k, int blocks, int shift, std::size_t es) {
  const int p = s.size();
  Step& st = addFlatStep(plan, kind, "bruck step at distance " + std::to_string(1 << k));
  st.param = k;
  for (int r = 0; r < p; ++r)
    addTransfer(st, s, r, pattern::wrap(static_cast<long long>(r) + shift, p),
                static_cast<std::uint64_t>(blocks) * plan.count * es);
  st.latencySteps = plan.fragments;
  st.busiestBytes = double(blocks) * double(plan.count * es);
  describeExchange(st, Exchange::Shift, st.busiestBytes, shift);
}

Step& localStep(Plan& plan, StepKind kind, const char* what, double bytes) {
  Step& st = addStep(plan, kind, Group::Self, what);
  st.perCall = true;
  st.localBytes = bytes;
  return st;
}

}  // namespace

void bruckAllgather(Plan& plan, const Request& req, const Shape& s) {
  const int p = s.size(), steps = pattern::bruckSteps(p);
  int most = 0;
  for (int k = 0; k < steps; ++k) most = std::max(most, pattern::bruckAllgatherStep(p, 0, k).count);
  cutFragments(plan, most ? flatScratchElements(req, s, true) / most : plan.count, 1);
  localStep(plan, StepKind::BruckRotate, "this rank's block into place", double(plan.count * dataTypeSize(req.dt)));
  for (int k = 0; k < steps; ++k)
    bruckStep(plan, s, StepKind::BruckAllgather, k, pattern::bruckAllgatherStep(p, 0, k).count, -(1 << k),
              dataTypeSize(req.dt));
}

void bruckAlltoall(Plan& plan, const Request& req, const Shape& s) {
  const std::size_t es = dataTypeSize(req.dt);
  const int p = s.size(), steps = pattern::bruckSteps(p);
  const int most = pattern::bruckAlltoallMaxBlocks(p);
  cutFragments(plan, most ? flatScratchElements(req, s, true) / most : plan.count, 1);
  localStep(plan, StepKind::BruckRotate, "position j gets the block for rank + j", double(p * plan.count * es));
  for (int k = 0; k < steps; ++k)
    bruckStep(plan, s, StepKind::BruckAlltoall, k, pattern::bruckAlltoallBlocks(p, k), 1 << k, es);
  localStep(plan, StepKind::BruckPlace, "each block to its source's index", double(p * plan.count * es));
}

}  // namespace tiercc::plans
