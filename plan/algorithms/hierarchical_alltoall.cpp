// Hierarchical all-to-all for mixture-of-experts traffic. Per fragment (a chunk of every
// block), with R rails: blocks for a destination of local rank l travel on rail l % R.
//   Stage          every rank copies into its window the chunks of the blocks other ranks of
//                  its domain read: theirs, and those another rail carries across (out of place;
//                  in place every block, since arrivals overwrite the send buffer)
//   RailCopy       rail j's member sends every block bound for the ranks it serves in each other
//                  domain, one message per block, straight from its source's window (its own from
//                  the send buffer), and receives the other domains' blocks for itself straight
//                  into its receive buffer, those for the ranks it serves besides into its window
//   Publish        rail members raise Reduced: the arrivals are in place
//   DomainGather   every rank copies its incoming blocks from inside its domain from their
//                  sources' windows, and from other domains from its rail member's window when
//                  that is not itself
// The slow tier carries each cross-domain byte once, on every rail at once, with one flow per
// link. Nothing is packed or unpacked: where the rails are as many as the domain's ranks (one
// NIC per rank) a block bound for another domain is copied once on its way, into its source's
// window when another rank sends it, and not at all when its source does (docs/performance.md,
// "Hierarchical all-to-all without packing"). Inside one domain on a direct path every rank
// copies its blocks straight from its peers' send buffers (not in place: a rank would overwrite
// blocks its peers have yet to read).
#include "plan/build.hpp"

namespace tiercc::plans {

void hierarchicalAlltoall(Plan& plan, const Request& req, const Shape& s) {
  const std::size_t es = dataTypeSize(req.dt), N = s.size();
  const int D = s.numDomains(), R = s.minDomainSize(), kmax = s.maxDomainSize();
  const bool direct = plan.path != Path::Staged;
  const std::vector<std::size_t> served = railTotals(s);
  std::size_t arrivals = 0, sent = 0;  // the most blocks any rail member receives, and sends
  std::size_t sentAlone = N;           // the fewest blocks a rail member sends of its own
  bool beyondRails = false;            // a domain has ranks that are no rail's member
  for (int d = 0; d < D; ++d) {
    const std::size_t k = s.domainSizes[d];
    beyondRails = beyondRails || k > std::size_t(R);
    for (int j = 0; j < R; ++j) {
      const std::size_t mine = railServes(s.domainSizes[d], j, R);
      arrivals = std::max(arrivals, mine * (N - k));  // from every rank outside, for the ranks it serves
      sent = std::max(sent, k * (served[j] - mine));  // from every rank inside, for those it serves outside
      sentAlone = std::min(sentAlone, served[j] - mine);
    }
  }
  const std::size_t capacity = direct ? plan.count : req.windowBytes / domainSlots(s, req) / es / (N + arrivals);
  const std::uint64_t B = plan.count * es;
  // Out of place, the busiest rank stages every block but its own, and a rail member also not
  // those it sends across itself (a rank beyond the rails sends none).
  const std::size_t staged = N - 1 - (beyondRails || D == 1 ? 0 : sentAlone);
  beginDomainPlan(plan, req, s, capacity, kNeedSend | kNeedOutOfPlace, Pieces::Routes, double(staged * B));
  const double F = plan.fragments;
  if (D > 1) {
    Step& rail = addStep(plan, StepKind::RailCopy, Group::Rail, "each block to the rail of its destination",
                         Pieces::Routes, Buffer::Window, Buffer::Recv);
    // The blocks for one rail peer are posted together and leave as one stream.
    rail.latencySteps = F;
    rail.busiestBytes = double(sent * B);
    rail.scaleOutBytes = crossPairs(s) * B;
    // A rail member sends its domain peers' blocks from their windows.
    rail.scaleUpBytes = overDomains(s, [&](std::uint64_t k) { return (N - k) * (k - 1) * B; });
    describeExchange(rail, Exchange::Rail, double(kmax * B));  // to each rail peer: a block from each source
    addPublish(plan, Pieces::Routes, 0);
  }
  Step& gather = addStep(plan, StepKind::DomainGather, Group::Domain, "every rank copies its incoming blocks",
                         Pieces::Routes, direct ? Buffer::PeerSend : Buffer::Window, Buffer::Recv);
  gather.latencySteps = direct ? 0 : F;  // direct: the send buffers are ready since Agree
  // From its domain peers, and a rank beyond the rails its blocks from other domains.
  const std::size_t reads = beyondRails ? N - 1 : std::size_t(kmax - 1);
  gather.busiestBytes = kmax > 1 ? double(reads * B) : 0;
  gather.localBytes = double(B);
  gather.scaleUpBytes = overDomains(s, [&](std::uint64_t k) { return (k * (k - 1) + (k - R) * (N - k)) * B; });
  if (plan.path == Path::CrossMemory) gather.crossMemoryReads = double(kmax - 1);
  if (kmax > 1) describeExchange(gather, Exchange::InDomain, double(reads * B) / (kmax - 1));  // from each peer
  endDomainPlan(plan);
}

}  // namespace tiercc::plans
