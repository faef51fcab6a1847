// Hierarchical, rail-parallel reduce-scatter. Per fragment (a chunk of every block), rail j
// holds the blocks of the local ranks l with l % R == j in every domain (R rails):
//   Stage          every rank copies the chunk of all N blocks into its window         (staged)
//   DomainReduce   rail j's member reduces its blocks over its domain, in local-rank order
//   RailReduce     partials of blocks owned in another domain go along rail j to it, which
//                  reduces them in domain order: the owner's block into its receive buffer
//   Publish        ... or, for an owner beyond the rails, into the holder's window
//   DomainGather   owners beyond the rails copy their block from it
// Each domain sends only partials of remote blocks: (D-1)/D x S per domain, the bound. Inside
// one domain each rank reduces its own block, straight from its peers' send buffers on a direct
// path.
#include "plan/algorithms/algorithms.hpp"
#include "plan/build.hpp"

namespace tiercc::plans {

void hierarchicalReduceScatter(Plan& plan, const Request& req, const Shape& s) {
  const std::size_t es = dataTypeSize(req.dt), N = s.size();
  const int D = s.numDomains(), R = s.minDomainSize(), kmax = s.maxDomainSize();
  const bool across = D > 1, direct = plan.path != Path::Staged, gather = kmax > R;
  const std::uint32_t slots = across ? 2 : 1;
  const std::size_t results = ceilDiv(kmax, R);  // blocks a rail member holds for its domain's owners
  std::size_t handled = 0;                       // blocks rail 0 reduces, the most of any rail
  for (int k : s.domainSizes) handled += railServes(k, 0, R);
  std::size_t capacity = plan.count;
  if (!direct) {
    capacity = req.windowBytes / slots / es / (N + results);
    if (across) {
      capacity = std::min(capacity, receiveBytes(req.windowBytes, D) / slots / es / ((D - 1) * results));
      capacity = std::min(capacity, accumulateBytes(req.windowBytes) / slots / es / handled);
    }
  }
  cutFragments(plan, capacity, slots);
  plan.rounds = direct ? Rounds::Direct : Rounds::PerFragment;
  plan.directNeeds = kNeedSend;
  const double F = plan.fragments;
  const std::uint64_t B = plan.count * es;

  if (direct) addAgree(plan);
  else addStage(plan, Pieces::Blocks, double(N * B));

  Step& reduce = addStep(plan, StepKind::DomainReduce, Tier::ScaleUp, Group::Domain, "each rail's blocks reduced over its domain");
  reduce.pieces = Pieces::Blocks;
  reduce.in = direct ? Buffer::PeerSend : Buffer::Window;
  reduce.out = across ? Buffer::Accumulate : Buffer::Recv;
  reduce.reduces = true;
  reduce.finalizes = !across;
  reduce.latencySteps = direct ? 0 : F;  // direct: the send buffers are ready since Agree
  reduce.busiestBytes = double((kmax - 1) * handled * B);
  for (int k : s.domainSizes) reduce.scaleUpBytes += static_cast<std::uint64_t>(k - 1) * N * B;
  if (plan.path == Path::CrossMemory)
    reduce.crossMemoryReads = (kmax - 1) * sumOverFragments(plan, [&](std::size_t n) { return ceilDiv(n * es, kCrossMemoryChunkBytes); });
  describeExchange(reduce, Exchange::InDomain, double(N * B) / R);

  if (across) {
    Step& rail = addStep(plan, StepKind::RailReduce, Tier::ScaleOut, Group::Rail, "partials of remote blocks to their domains");
    rail.pieces = Pieces::Blocks;
    rail.in = Buffer::Accumulate;
    rail.out = Buffer::Recv;  // owners beyond the rails: the holder's window
    rail.reduces = rail.finalizes = true;
    rail.latencySteps = F;
    rail.busiestBytes = double((handled - 1) * B);
    rail.scaleOutBytes = (D - 1) * N * B;
    describeExchange(rail, Exchange::Rail, double(B));
  }
  if (gather) {  // uneven domains (staged): owners beyond the rails
    addPublish(plan, Pieces::Blocks, 0);
    Step& copy = addStep(plan, StepKind::DomainGather, Tier::ScaleUp, Group::Domain, "owners beyond the rails copy their block");
    copy.pieces = Pieces::Blocks;
    copy.in = Buffer::Window;
    copy.out = Buffer::Recv;
    copy.latencySteps = F;
    copy.busiestBytes = double(B);
    for (int k : s.domainSizes) copy.scaleUpBytes += static_cast<std::uint64_t>(k - R) * B;
    describeExchange(copy, Exchange::InDomain, double(B));
  }
  if (direct) addClose(plan);
}

}  // namespace tiercc::plans
