// Hierarchical, rail-parallel allreduce (and the hierarchical barrier, a one-byte allreduce).
// Per fragment, with D domains, k_d ranks in domain d and R = the smallest k_d rails:
//   Stage          every rank copies its fragment into its window, but for the slice it
//                  reduces itself                                                 (staged)
//   DomainReduce   rail j's member reduces slice j over its domain, in local-rank order, its
//                  own part from its send buffer, into its receive buffer
//   RailReduce     along rail j, domain d reduces sub-slice d of slice j, in domain order
//   RailCopy       ... and sends it to the rail's other domains
//   Publish        rail j's member puts slice j where its domain reads it (Reduced): staged, a
//                  copy into its window
//   DomainGather   every rank copies every slice but its own
// Each domain sends 2(D-1)/D x S across, the bound, over all R rails. Across domains two
// fragments are in flight, each in half of the window and scratch, so that the rails carry one
// fragment while the domains stage and reduce the next; fragments are the same on every path,
// so that domains which take different paths still exchange the same rail messages.
//
// On every path the rail steps run in the rail member's receive buffer, where its slice ends.
// Direct paths read peers' buffers instead of windows: the reduction goes straight from every
// rank's send buffer into the rail member's receive buffer, and the gather copies from the
// owners' receive buffers. Staged, a slice is copied into a window only for another rank to read
// it: a rail member neither stages the slice it reduces nor copies it back (before, the reduction
// went into the scratch and the gather took every slice from the windows: 4 S copied per rank
// on 2 x 2 where it is 3 S now). Inside one domain a direct fragment is 1 MiB of
// every rail's slice: peers copy a slice while it is still in cache.
#include "plan/build.hpp"

namespace tiercc::plans {
constexpr std::size_t kDirectSliceBytes = 1 << 20;

void hierarchicalAllreduce(Plan& plan, const Request& req, const Shape& s) {
  const std::size_t es = dataTypeSize(req.dt);
  const int D = s.numDomains(), R = s.minDomainSize(), kmax = s.maxDomainSize();
  const bool across = D > 1, direct = plan.path != Path::Staged, cma = plan.path == Path::CrossMemory;
  const std::uint64_t S = plan.count * es;
  beginDomainPlan(plan, req, s,
                  across || !direct ? req.windowBytes / domainSlots(s, req) / es : R * (kDirectSliceBytes / es),
                  kNeedSend | kNeedRecv, Pieces::Vector, double(S));
  const double F = plan.fragments;
  // The busiest rank stages all of its fragment if it is no rail's member, else all but the
  // smallest slice (exec/domain_steps.cpp).
  if (!direct && kmax == R)
    plan.steps.back().localBytes -= sumOverFragments(plan, [&](std::size_t n) { return n / R * es; });
  // What every domain reads of its ranks, once to reduce and once to gather.
  const std::uint64_t inside = overDomains(s, [&](std::uint64_t k) { return (k - 1) * S; });
  auto slice = [&](std::size_t n) { return ceilDiv(n, R) * es; };  // the largest slice of a fragment

  Step& reduce = addStep(plan, StepKind::DomainReduce, Group::Domain, "each rail's slice reduced over its domain",
                         Pieces::Vector, direct ? Buffer::PeerSend : Buffer::Window, Buffer::Recv);
  reduce.finalizes = !across;
  reduce.latencySteps = direct ? 0 : F;  // direct: the send buffers are ready since Agree
  reduce.busiestBytes = double(kmax - 1) * S / R;
  reduce.scaleUpBytes = inside;
  if (cma) {
    reduce.crossMemoryReads =
        (kmax - 1) * sumOverFragments(plan, [&](std::size_t n) { return ceilDiv(slice(n), kCrossMemoryChunkBytes); });
    reduce.localBytes = reduce.busiestBytes;  // the kernel copies into a bounce buffer the reduction reads again
  }
  describeExchange(reduce, Exchange::InDomain, double(S) / R);

  // Rank (d, j) sends the D - 1 other sub-slices of its slice, and later its own to D - 1 peers.
  for (StepKind kind : {StepKind::RailReduce, StepKind::RailCopy}) {
    if (!across) break;
    const bool first = kind == StepKind::RailReduce;
    Step& rail = addStep(plan, kind, Group::Rail,
                         first ? "along each rail, each domain reduces its sub-slice"
                               : "along each rail, the sub-slices to every domain",
                         Pieces::Vector, reduce.out, reduce.out);
    rail.finalizes = first;
    rail.latencySteps = F;
    rail.busiestBytes = double(D - 1) * S / (double(D) * R);
    rail.scaleOutBytes = (D - 1) * S;
    describeExchange(rail, Exchange::Rail, double(S) / R / D);
  }

  Step& publish = addPublish(plan, Pieces::Vector, direct ? 0 : sumOverFragments(plan, slice));
  if (!direct) publish.in = Buffer::Recv;  // the slice, out of the receive buffer into the window

  Step& gather = addStep(plan, StepKind::DomainGather, Group::Domain, "every rank copies every slice", Pieces::Vector,
                         direct ? Buffer::PeerRecv : Buffer::Window, Buffer::Recv);
  gather.latencySteps = F;
  // A rank beyond the rails owns no slice and reads them all; a rail member all but its own.
  gather.busiestBytes =
      kmax > R ? double(S) : double(S) - sumOverFragments(plan, [&](std::size_t n) { return n / R * es; });
  gather.scaleUpBytes = inside;
  if (cma) gather.crossMemoryReads = F * (kmax > R ? R : R - 1);
  describeExchange(gather, Exchange::InDomain, double(S) / R);
  endDomainPlan(plan);
}

}  // namespace tiercc::plans
