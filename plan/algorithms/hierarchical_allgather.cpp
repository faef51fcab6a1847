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
#include "plan/algorithms/algorithms.hpp"
#include "plan/build.hpp"

namespace tiercc::plans {

void hierarchicalAllgather(Plan& plan, const Request& req, const Shape& s) {
  const std::size_t es = dataTypeSize(req.dt), N = s.size();
  const int D = s.numDomains(), R = s.minDomainSize(), kmax = s.maxDomainSize();
  const bool across = D > 1, direct = plan.path != Path::Staged;
  const std::uint32_t slots = across ? 2 : 1;
  std::size_t arrivals = 0;  // the most blocks any rail member receives from other domains
  for (int d = 0; d < D; ++d)
    for (int j = 0; j < R; ++j) {
      std::size_t n = 0;
      for (int e = 0; e < D; ++e)
        if (e != d) n += railServes(s.domainSizes[e], j, R);
      arrivals = std::max(arrivals, n);
    }
  cutFragments(plan, direct ? plan.count : req.windowBytes / slots / es / (1 + arrivals), slots);
  plan.rounds = direct ? Rounds::Direct : Rounds::PerFragment;
  plan.directNeeds = kNeedSend;
  const double F = plan.fragments;
  const std::uint64_t B = plan.count * es;

  if (direct) addAgree(plan);
  else addStage(plan, Pieces::Blocks, double(B));
  if (across) {
    Step& rail = addStep(plan, StepKind::RailCopy, Tier::ScaleOut, Group::Rail, "each rail's blocks to every other domain");
    rail.pieces = Pieces::Blocks;
    rail.in = Buffer::Window;
    rail.out = Buffer::Window;
    rail.latencySteps = F;
    rail.busiestBytes = double(ceilDiv(kmax, R) * (D - 1) * B);
    rail.scaleOutBytes = (D - 1) * N * B;
    // A rail member sends the blocks of the domain peers it serves from their windows.
    for (int k : s.domainSizes) rail.scaleUpBytes += static_cast<std::uint64_t>(D - 1) * (k - R) * B;
    describeExchange(rail, Exchange::Rail, double(B));
    addPublish(plan, Pieces::Blocks, 0);
  }
  Step& gather = addStep(plan, StepKind::DomainGather, Tier::ScaleUp, Group::Domain, "every rank copies every block");
  gather.pieces = Pieces::Blocks;
  gather.in = direct ? Buffer::PeerSend : Buffer::Window;
  gather.out = Buffer::Recv;
  gather.latencySteps = direct ? 0 : F;  // direct: the send buffers are ready since Agree
  gather.busiestBytes = kmax > 1 ? double((N - 1) * B) : 0;
  gather.localBytes = double(B);
  // Every rank reads the k - 1 blocks of its domain peers and the remote blocks other rail
  // members hold: per domain (k - 1) N blocks.
  for (int k : s.domainSizes) gather.scaleUpBytes += static_cast<std::uint64_t>(k - 1) * N * B;
  if (plan.path == Path::CrossMemory) gather.crossMemoryReads = double(kmax - 1);
  if (kmax > 1) describeExchange(gather, Exchange::InDomain, double((N - 1) * B) / (kmax - 1));  // from each peer, on average
  if (direct) addClose(plan);
}

}  // namespace tiercc::plans
