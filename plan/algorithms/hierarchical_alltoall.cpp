// Hierarchical all-to-all for mixture-of-experts traffic. Per fragment (a chunk of every
// block), with R rails: blocks for a destination of local rank l travel on rail l % R.
//   Stage          every rank copies the chunks of its N outgoing blocks into its window
//   DomainPack     rail j's member packs, from its domain's windows, every block bound for the
//                  ranks it serves in each other domain: ONE message per destination domain
//   RailCopy       ... sends it there, and receives the other domains' into its window
//   Publish        rail members raise Reduced: the arrivals are in place
//   DomainGather   every rank copies its N incoming blocks: from the source's window inside its
//                  domain, from the arrivals of its rail's member for other domains
// The slow tier carries each cross-domain byte once, in few large messages, on every rail at
// once. Inside one domain on a direct path every rank copies its blocks straight from its peers'
// send buffers (not in place: a rank would overwrite blocks its peers have yet to read).
#include "plan/build.hpp"

namespace tiercc::plans {

void hierarchicalAlltoall(Plan& plan, const Request& req, const Shape& s) {
  const std::size_t es = dataTypeSize(req.dt), N = s.size();
  const int D = s.numDomains(), R = s.minDomainSize(), kmax = s.maxDomainSize();
  const bool direct = plan.path != Path::Staged;
  const std::uint32_t slots = domainSlots(s, req);
  const std::vector<std::size_t> served = railTotals(s);
  std::size_t arrivals = 0, packed = 0;  // the most blocks any rail member receives, and sends
  for (int d = 0; d < D; ++d)
    for (int j = 0; j < R; ++j) {
      const std::size_t k = s.domainSizes[d], mine = railServes(s.domainSizes[d], j, R);
      arrivals = std::max(arrivals, mine * (N - k));      // from every rank outside, for the ranks it serves
      packed = std::max(packed, k * (served[j] - mine));  // from every rank inside, for those it serves outside
    }
  std::size_t capacity = direct ? plan.count : req.windowBytes / slots / es / (N + arrivals);
  if (packed) capacity = std::min(capacity, accumulateBytes(req.windowBytes) / slots / es / packed);
  const std::uint64_t B = plan.count * es;
  beginDomainPlan(plan, req, s, capacity, kNeedSend | kNeedOutOfPlace, Pieces::Routes, double(N * B));
  const double F = plan.fragments;
  if (D > 1) {
    Step& pack = addStep(plan, StepKind::DomainPack, Group::Domain, "one message per destination domain, packed",
                         Pieces::Routes, Buffer::Window, Buffer::Accumulate);
    pack.latencySteps = F;
    pack.busiestBytes = double((packed - packed / kmax) * B);
    pack.localBytes = double(packed / kmax * B);
    pack.scaleUpBytes = overDomains(s, [&](std::uint64_t k) { return (N - k) * (k - 1) * B; });
    if (kmax > 1) describeExchange(pack, Exchange::InDomain, pack.busiestBytes / (kmax - 1));

    Step& rail = addStep(plan, StepKind::RailCopy, Group::Rail, "one message per (rail, destination domain)",
                         Pieces::Routes, Buffer::Accumulate, Buffer::Window);
    rail.latencySteps = F;
    rail.busiestBytes = double(packed * B);
    rail.scaleOutBytes = crossPairs(s) * B;
    describeExchange(rail, Exchange::Rail, double(kmax * B));
    addPublish(plan, Pieces::Routes, 0);
  }
  Step& gather = addStep(plan, StepKind::DomainGather, Group::Domain, "every rank copies its incoming blocks",
                         Pieces::Routes, direct ? Buffer::PeerSend : Buffer::Window, Buffer::Recv);
  gather.latencySteps = direct ? 0 : F;  // direct: the send buffers are ready since Agree
  gather.busiestBytes = kmax > 1 ? double((N - 1) * B) : 0;
  gather.localBytes = double(B);
  gather.scaleUpBytes = overDomains(s, [&](std::uint64_t k) { return (k * (k - 1) + (k - R) * (N - k)) * B; });
  if (plan.path == Path::CrossMemory) gather.crossMemoryReads = double(kmax - 1);
  if (kmax > 1) describeExchange(gather, Exchange::InDomain, double((N - 1) * B) / (kmax - 1));  // from each peer
  endDomainPlan(plan);
}

}  // namespace tiercc::plans
