// Hierarchical, rail-parallel allgather. Per fragment (a chunk of every rank's block), rail j
// carries the blocks of the local ranks l with l % R == j (R rails):
//   Stage          every rank copies its chunk into its window
//   RailCopy       rail j's member sends those blocks, read from their windows, to rail j of
//                  every other domain, which receives them into its window's arrival slots
//   Publish        rail members raise Reduced: the arrivals are in place
//   DomainGather   every rank copies each block from the window that holds it
// Each domain receives every remote block once, the bound ((D-1)/D x S per domain for uniform
// domains), over all rails. Inside one domain on a direct path every rank copies its peers'
// blocks straight from their send buffers.
//
// Across domains a rail message (the blocks a rail member serves, one chunk each) is kept to
// the transport's preferred size (Request::railMessageBytes; TCP's 256 KiB): with two fragments
// on the wire at once, larger ones only queue more data ahead of the other direction's traffic.
#include "plan/build.hpp"

namespace tiercc::plans {

void hierarchicalAllgather(Plan& plan, const Request& req, const Shape& s) {
  const std::size_t es = dataTypeSize(req.dt), N = s.size();
  const int D = s.numDomains(), R = s.minDomainSize(), kmax = s.maxDomainSize();
  const bool direct = plan.path != Path::Staged;
  const std::vector<std::size_t> served = railTotals(s);
  std::size_t arrivals = 0;  // the most blocks any rail member receives from other domains
  for (int d = 0; d < D; ++d)
    for (int j = 0; j < R; ++j) arrivals = std::max(arrivals, served[j] - railServes(s.domainSizes[d], j, R));
  const std::uint64_t B = plan.count * es;
  std::size_t capacity = direct ? plan.count : req.windowBytes / domainSlots(s, req) / es / (1 + arrivals);
  if (D > 1 && req.railMessageBytes)
    capacity = std::min(capacity, std::max<std::size_t>(1, req.railMessageBytes / es / ceilDiv(kmax, R)));
  beginDomainPlan(plan, req, s, capacity, kNeedSend, Pieces::Blocks, double(B));
  const double F = plan.fragments;
  if (D > 1) {
    Step& rail = addStep(plan, StepKind::RailCopy, Group::Rail, "each rail's blocks to every other domain",
                         Pieces::Blocks, Buffer::Window, Buffer::Window);
    rail.latencySteps = F;
    rail.busiestBytes = double(ceilDiv(kmax, R) * (D - 1) * B);
    rail.scaleOutBytes = (D - 1) * N * B;
    // A rail member sends the blocks of the domain peers it serves from their windows.
    rail.scaleUpBytes = overDomains(s, [&](std::uint64_t k) { return (D - 1) * (k - R) * B; });
    describeExchange(rail, Exchange::Rail, double(B));
    addPublish(plan, Pieces::Blocks, 0);
  }
  Step& gather = addStep(plan, StepKind::DomainGather, Group::Domain, "every rank copies every block", Pieces::Blocks,
                         direct ? Buffer::PeerSend : Buffer::Window, Buffer::Recv);
  gather.latencySteps = direct ? 0 : F;  // direct: the send buffers are ready since Agree
  gather.busiestBytes = kmax > 1 ? double((N - 1) * B) : 0;
  gather.localBytes = double(B);
  // Every rank reads the k - 1 blocks of its domain peers and the remote blocks other rail
  // members hold: per domain (k - 1) N blocks.
  gather.scaleUpBytes = overDomains(s, [&](std::uint64_t k) { return (k - 1) * N * B; });
  if (plan.path == Path::CrossMemory) gather.crossMemoryReads = double(kmax - 1);
  if (kmax > 1) describeExchange(gather, Exchange::InDomain, double((N - 1) * B) / (kmax - 1));  // from each peer
  endDomainPlan(plan);
}

}  // namespace tiercc::plans
