// Linear all-to-all (Open MPI's "basic linear" across domains): every rank sends each block for
// a rank of another domain straight from its send buffer to that rank, one message per block,
// and receives theirs straight into its receive buffer; meanwhile it copies the blocks of its
// own domain as the hierarchical plan does.
//   CrossExchange  once per call, first: every rank posts N - k receives of whole blocks into its
//                  receive buffer and N - k sends from its send buffer; they complete at the
//                  call's end
//   Agree | Stage  direct paths: the buffer descriptors; staged: this rank's blocks for its
//                  domain peers into its window, fragment by fragment (in place its own too)
//   DomainGather   its k blocks from inside the domain: from its peers' send buffers (direct) or
//                  windows (staged), its own from its send buffer
// Each cross-domain byte crosses once, as in the hierarchical plan, and no byte is copied on its
// way across, where the hierarchical plan copies a block into its source's window when another
// rank sends it. The price is messages, N - k per rank, whole blocks, and flows: k of them share
// each link into a domain, where the hierarchical plan has one. On the 2 x 2 two-tier network
// at 20 Gbit/s (CPU-bound) it moved 1.08-1.21x the busbw of the hierarchical plan when that
// still packed its blocks, and 0.79-0.86x from 4 MiB since it does not; at 1 Gbit/s its two
// flows per link reached 88-89% of the bound against 92-95% (docs/performance.md). The cost
// model prices neither the CPU a socket transport spends nor the flows, so the plan runs only
// where TIERCC_ALGO asks for it (registry.cpp).
//
// The messages across are whole blocks whatever the path: a domain on a direct path and one on
// the staged path cut different fragments, and their messages still match. In place, the blocks
// from other domains wait in a buffer of the executor's until this rank's own have left.
#include "plan/build.hpp"

namespace tiercc::plans {

void linearAlltoall(Plan& plan, const Request& req, const Shape& s) {
  const std::size_t es = dataTypeSize(req.dt), N = s.size();
  const int D = s.numDomains(), kmin = s.minDomainSize(), kmax = s.maxDomainSize();
  const bool direct = plan.path != Path::Staged;
  const std::uint64_t B = plan.count * es;
  // Staged: the blocks for the domain's k ranks in the window.
  const std::size_t capacity = direct ? plan.count : req.windowBytes / domainSlots(s, req) / es / kmax;
  // Out of place a rank stages the blocks of its domain peers, not its own.
  beginDomainPlan(plan, req, s, capacity, kNeedSend | kNeedOutOfPlace, Pieces::DomainRoutes, double((kmax - 1) * B));
  Step& gather = addStep(plan, StepKind::DomainGather, Group::Domain, "every rank copies its blocks from its domain",
                         Pieces::DomainRoutes, direct ? Buffer::PeerSend : Buffer::Window, Buffer::Recv);
  gather.latencySteps = direct ? 0 : plan.fragments;  // direct: the send buffers are ready since Agree
  gather.busiestBytes = kmax > 1 ? double((kmax - 1) * B) : 0;
  gather.localBytes = double(B);
  gather.scaleUpBytes = insidePairs(s) * B;
  if (plan.path == Path::CrossMemory) gather.crossMemoryReads = double(kmax - 1);
  if (kmax > 1) describeExchange(gather, Exchange::InDomain, double(B));
  endDomainPlan(plan);
  if (D == 1) return;

  // First, before the domain's steps (the same index on every path, for the tags), which do not
  // wait for it: it completes at the call's end.
  addStep(plan, StepKind::CrossExchange, Group::World, "every block straight to its rank in another domain",
          Pieces::Routes, Buffer::Send, Buffer::Recv);
  Step cross = std::move(plan.steps.back());
  plan.steps.pop_back();
  for (Step& st : plan.steps) st.after <<= 1;
  cross.after = 0;
  cross.tier = Tier::ScaleOut;
  cross.perCall = true;
  const std::size_t outside = N - kmin;  // the most blocks a rank sends across, and receives
  // Posted at once, the messages overlap on the wire, but each one is its own posts, matching
  // and system calls on both sides: a message costs the link's latency, as a pairwise round does.
  cross.latencySteps = double(outside);
  cross.busiestBytes = double(outside * B);  // a rank's NIC carries its own blocks
  cross.scaleOutBytes = crossPairs(s) * B;
  describeExchange(cross, Exchange::Across, double(B));
  plan.steps.push_front(std::move(cross));
}

}  // namespace tiercc::plans
