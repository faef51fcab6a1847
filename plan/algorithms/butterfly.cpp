// Butterflies over the largest power of two p2 <= p (pattern::Butterfly); the r = p - p2 extra
// ranks first fold into a partner and get the result back at the end. Halving-doubling
// (Rabenseifner): recursive-halving reduce-scatter, then recursive-doubling allgather, each
// butterfly rank sending about 2 (p2-1)/p2 of the vector in 2 log2 p2 rounds. Recursive
// doubling: log2 p2 exchanges of the whole vector, for small messages. Distance 1 first, so
// the largest halves stay closest (often in one domain).
#include "plan/build.hpp"
#include "plan/pattern/halving_doubling.hpp"

namespace tiercc::plans {
namespace {

// A butterfly round: virtual rank v sends bytes(v, n) to its partner at `mask` per fragment.
template <class Bytes>
void exchangeStep(Plan& plan, const Shape& s, const pattern::Butterfly& bf, StepKind kind, int mask, Bytes bytes) {
  static const char* const kWhat[] = {"halving exchange at distance ", "doubling exchange at distance "};
  Step& st = addFlatStep(plan, kind, kWhat[kind != StepKind::HalvingReduce] + std::to_string(mask));
  st.param = mask;
  forEachFragmentSize(plan, [&](std::size_t n, std::uint64_t times) {
    std::uint64_t most = 0;
    for (int v = 0; v < bf.participants(); ++v) {
      const std::uint64_t sent = bytes(v, n);
      addTransfer(st, s, bf.realRank(v), bf.realRank(v ^ mask), times * sent);
      most = std::max(most, sent);
    }
    st.busiestBytes += double(times * most);
  });
  st.latencySteps = plan.fragments;
  describeExchange(st, Exchange::Butterfly, double(st.scaleUpBytes + st.scaleOutBytes) / bf.participants(), mask);
}

// Fold (direction 0: every rank copies its input into its output, the working copy, and the
// folding ranks send theirs to their partner) or unfold (1: the result back).
void foldStep(Plan& plan, const Request& req, const Shape& s, const pattern::Butterfly& bf, int direction) {
  if (bf.extra() == 0 && direction == 1) return;
  const std::size_t es = dataTypeSize(req.dt);
  Step& st = addFlatStep(
      plan, direction ? StepKind::Unfold : StepKind::Fold,
      direction ? "return results to folded ranks"
                : "input into the output; fold " + std::to_string(bf.extra()) + " extra ranks into partners");
  for (int i = 0; i < 2 * bf.extra(); i += 2)
    addTransfer(st, s, direction ? i + 1 : i, direction ? i : i + 1, plan.count * es);
  if (bf.extra() == 0) return;
  st.latencySteps = plan.fragments * (direction ? 1.0 : 2.0);  // the fold comes in two pieces
  st.busiestBytes = double(plan.count * es);
  describeExchange(st, Exchange::Fold, double(st.scaleUpBytes + st.scaleOutBytes) / bf.extra(), direction);
}

}  // namespace

void halvingDoublingAllreduce(Plan& plan, const Request& req, const Shape& s) {
  const std::size_t es = dataTypeSize(req.dt);
  const pattern::Butterfly bf(s.size());
  const int p2 = bf.participants(), L = bf.steps();
  // A halving round receives at most half a fragment into the receive scratch, so a fragment is
  // about two scratches (the larger half of n elements in p2 blocks is at most n/2 + p2/4).
  const std::size_t piece = flatScratchElements(req, s, false), slack = static_cast<std::size_t>(p2) / 2;
  cutFragments(plan, 2 * piece > piece + slack ? 2 * piece - slack : piece, 1);
  auto range = [&](pattern::BlockRange r, std::size_t n) {
    return (pattern::blockBegin(n, p2, r.end) - pattern::blockBegin(n, p2, r.begin)) * es;
  };
  foldStep(plan, req, s, bf, 0);
  for (int step = 0; step < L; ++step)
    exchangeStep(plan, s, bf, StepKind::HalvingReduce, 1 << step,
                 [&](int v, std::size_t n) { return range(bf.sent(v, step), n); });
  plan.steps.back().finalizes = L > 0;
  for (int step = L - 1; step >= 0; --step)
    exchangeStep(plan, s, bf, StepKind::DoublingGather, 1 << step,
                 [&](int v, std::size_t n) { return range(bf.kept(v, step), n); });
  foldStep(plan, req, s, bf, 1);
}

void recursiveDoublingAllreduce(Plan& plan, const Request& req, const Shape& s) {
  const std::size_t es = dataTypeSize(req.dt);
  const pattern::Butterfly bf(s.size());
  cutFragments(plan, flatScratchElements(req, s, false), 1);
  foldStep(plan, req, s, bf, 0);
  for (int step = 0; step < bf.steps(); ++step)
    exchangeStep(plan, s, bf, StepKind::DoublingReduce, 1 << step, [&](int, std::size_t n) { return n * es; });
  if (bf.steps() > 0) plan.steps.back().finalizes = true;
  foldStep(plan, req, s, bf, 1);
}

}  // namespace tiercc::plans
