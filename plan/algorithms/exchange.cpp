// Pairwise exchange (pattern/pairwise.hpp): p rounds, in each of which every rank swaps one
// block with one peer (symmetric pairs, any p), so every byte crosses once: the bandwidth choice
// for large blocks, and the only choice for ragged (v) sizes. Blocks travel in pieces of one
// receive scratch inside their round.
//
// Dissemination barrier: in round k every rank signals the rank 2^k after it and waits for the
// rank 2^k before it, with empty messages. After ceil(log2 p) rounds every rank has heard,
// directly or not, from every other.
//
// Send and receive: one message between two ranks over the transport, on the scale-up tier when
// they share a domain. The sender counts it (Request::root is this rank, Request::peer the other).
#include "plan/build.hpp"
#include "plan/pattern/bruck.hpp"

namespace tiercc::plans {
namespace {

Step& pairwiseStep(Plan& plan, const Shape& s) {
  Step& st = addFlatStep(plan, StepKind::Pairwise, "pairwise exchange, " + std::to_string(s.size() - 1) + " rounds");
  st.latencySteps = s.size() - 1;
  st.tier = s.numDomains() > 1 ? Tier::ScaleOut : Tier::ScaleUp;
  return st;
}

}  // namespace

void pairwiseAlltoall(Plan& plan, const Request& req, const Shape& s) {
  const std::uint64_t B = plan.count * dataTypeSize(req.dt);
  cutFragments(plan, std::max<std::size_t>(plan.count, 1), 1);  // empty blocks: no messages
  Step& st = pairwiseStep(plan, s);
  st.scaleOutBytes = crossPairs(s) * B;
  st.scaleUpBytes = insidePairs(s) * B;
  st.busiestBytes = double((s.size() - 1) * B);
  // Pieces of a block: each a message of its round.
  st.latencySteps *= double(std::max<std::uint64_t>(1, ceilDiv(B, receiveBytes(req.windowBytes, s.numDomains()))));
  describeExchange(st, Exchange::All, double(B));
}

// With the count matrix the bytes are exact; without it, the total is spread evenly over pairs.
void pairwiseAlltoallv(Plan& plan, const Request& req, const Shape& s) {
  const std::uint64_t N = s.size();
  oneFragment(plan);  // its messages travel even when empty: a mismatch is reported, not waited for
  Step& st = pairwiseStep(plan, s);
  if (req.alltoallvBytes && req.alltoallvBytes->size() == N * N) {
    const std::vector<std::uint64_t>& m = *req.alltoallvBytes;
    std::vector<std::uint64_t> sent(N);
    for (std::uint64_t i = 0; i < N; ++i)
      for (std::uint64_t j = 0; j < N; ++j)
        if (i != j) {
          addTransfer(st, s, static_cast<int>(i), static_cast<int>(j), m[i * N + j]);
          sent[i] += m[i * N + j];
        }
    st.busiestBytes = double(*std::max_element(sent.begin(), sent.end()));
  } else {
    st.scaleOutBytes = req.totalBytes * crossPairs(s) / (N * N);
    st.scaleUpBytes = req.totalBytes * insidePairs(s) / (N * N);
    st.busiestBytes = double(req.totalBytes) / N;
  }
  describeExchange(st, Exchange::All, double(st.scaleUpBytes + st.scaleOutBytes) / double(N * (N - 1)));
}

void disseminationBarrier(Plan& plan, const Request&, const Shape& s) {
  const int p = s.size();
  cutFragments(plan, 1, 1);
  Step& st = addFlatStep(plan, StepKind::Dissemination, "dissemination, empty messages");
  st.latencySteps = pattern::bruckSteps(p);
  for (int k = 0; k < pattern::bruckSteps(p); ++k)
    for (int r = 0; r < p; ++r) addTransfer(st, s, r, pattern::disseminationSendTo(p, r, k), 0);
}

void pointToPoint(Plan& plan, const Request& req, const Shape& s) {
  const bool send = req.coll == Collective::Send;
  oneFragment(plan);  // an empty message travels too
  Step& st = addFlatStep(plan, send ? StepKind::Send : StepKind::Recv,
                         send ? "to rank " + std::to_string(req.peer) : "from rank " + std::to_string(req.peer));
  st.group = Group::Pair;
  addTransfer(st, s, req.root, req.peer, send ? plan.count * dataTypeSize(req.dt) : 0);
  st.latencySteps = 1;
  st.busiestBytes = double(plan.count * dataTypeSize(req.dt));
}

}  // namespace tiercc::plans
