// Hierarchical, rail-parallel reduce-scatter. Per fragment (a chunk of every block), rail j
// holds the blocks of the local ranks l with l % R == j in every domain (R rails):
//   Stage          every rank copies the chunk of all N blocks into its window, but for the
//                  blocks it reduces itself                                            (staged)
//   DomainReduce   rail j's member reduces its blocks over its domain, in local-rank order,
//                  its own part from its send buffer
//   RailReduce     partials of blocks owned in another domain go along rail j to it, which
//                  reduces them in domain order: the owner's block into its receive buffer
//   Publish        ... or, for an owner beyond the rails, into the holder's window
//   DomainGather   owners beyond the rails copy their block from it
// Each domain sends only partials of remote blocks: (D-1)/D x S per domain, the bound. Inside
// one domain each rank reduces its own block, straight from its peers' send buffers on a direct
// path.
#include "plan/build.hpp"

namespace tiercc::plans {

void hierarchicalReduceScatter(Plan& plan, const Request& req, const Shape& s) {
  const std::size_t es = dataTypeSize(req.dt), N = s.size();
  const int D = s.numDomains(), R = s.minDomainSize(), kmax = s.maxDomainSize();
  const bool across = D > 1, direct = plan.path != Path::Staged;
  const std::uint32_t slots = domainSlots(s, req);
  const std::size_t results = ceilDiv(kmax, R);  // blocks a rail member holds for its domain's owners
  const std::size_t handled =
      overDomains(s, [&](std::uint64_t k) { return railServes(k, 0, R); });  // rail 0's, the most
  std::size_t capacity = plan.count;
  if (!direct) {
    capacity = req.windowBytes / slots / es / (N + results);
    if (across) {
      capacity = std::min(capacity, receiveBytes(req.windowBytes, D) / slots / es / ((D - 1) * results));
      capacity = std::min(capacity, accumulateBytes(req.windowBytes) / slots / es / handled);
    }
  }
  const std::uint64_t B = plan.count * es;
  beginDomainPlan(plan, req, s, capacity, kNeedSend, Pieces::Blocks, double(N * B));
  const double F = plan.fragments;
  // The busiest rank stages all N blocks if it is no rail's member, else all but those it
  // handles (rail R - 1 the fewest).
  const std::size_t fewest = overDomains(s, [&](std::uint64_t k) { return railServes(k, R - 1, R); });
  if (!direct && kmax == R) plan.steps.back().localBytes = double((N - fewest) * B);

  Step& reduce =
      addStep(plan, StepKind::DomainReduce, Group::Domain, "each rail's blocks reduced over its domain", Pieces::Blocks,
              direct ? Buffer::PeerSend : Buffer::Window, across ? Buffer::Accumulate : Buffer::Recv);
  reduce.finalizes = !across;
  reduce.latencySteps = direct ? 0 : F;  // direct: the send buffers are ready since Agree
  reduce.busiestBytes = double((kmax - 1) * handled * B);
  reduce.scaleUpBytes = overDomains(s, [&](std::uint64_t k) { return (k - 1) * N * B; });
  if (plan.path == Path::CrossMemory) {
    reduce.crossMemoryReads =
        (kmax - 1) * sumOverFragments(plan, [&](std::size_t n) { return ceilDiv(n * es, kCrossMemoryChunkBytes); });
    reduce.localBytes = reduce.busiestBytes;  // the kernel copies into a bounce buffer the reduction reads again
  }
  describeExchange(reduce, Exchange::InDomain, double(N * B) / R);

  if (across) {  // into the owner's receive buffer; for owners beyond the rails, the holder's window
    Step& rail = addStep(plan, StepKind::RailReduce, Group::Rail, "partials of remote blocks to their domains",
                         Pieces::Blocks, Buffer::Accumulate, Buffer::Recv);
    rail.finalizes = true;
    rail.latencySteps = F;
    rail.busiestBytes = double((handled - 1) * B);
    rail.scaleOutBytes = (D - 1) * N * B;
    describeExchange(rail, Exchange::Rail, double(B));
  }
  if (kmax > R) {  // uneven domains (staged): owners beyond the rails
    addPublish(plan, Pieces::Blocks, 0);
    Step& copy = addStep(plan, StepKind::DomainGather, Group::Domain, "owners beyond the rails copy their block",
                         Pieces::Blocks, Buffer::Window, Buffer::Recv);
    copy.latencySteps = F;
    copy.busiestBytes = double(B);
    copy.scaleUpBytes = overDomains(s, [&](std::uint64_t k) { return (k - R) * B; });
    describeExchange(copy, Exchange::InDomain, double(B));
  }
  endDomainPlan(plan);
}

}  // namespace tiercc::plans
