// Hierarchical, rail-parallel broadcast and reduce; rail j carries slice j of each fragment (R
// rails). Broadcast: the root stages its fragment; in the root's domain rail j's member sends
// slice j straight from the root's window to rail j of every other domain, which keeps it in its
// window and publishes it; every rank copies the fragment (in the root's domain, from the root's
// window). Reduce is the mirror image: rail j's members reduce slice j over their domains,
// partials go along rail j to the root's domain, which reduces them in domain order, and the
// root copies the slices. Each non-root domain receives (or sends) the data once: the bound.
// Inside one domain a direct broadcast copies the root's send buffer, and a direct reduce (zero
// copy) reduces each slice straight into the root's receive buffer.
#include "plan/build.hpp"

namespace tiercc::plans {
namespace {

// Bytes of every slice but the root's own (a rail member serves that one itself), over the call.
double otherSlices(const Plan& plan, int rootLocal, int R, std::size_t es) {
  return sumOverFragments(plan,
                          [&](std::size_t n) { return (n - (rootLocal < R ? partSize(n, R, rootLocal) : 0)) * es; });
}

int localRankOf(const Shape& s, int rank) {
  int local = 0;
  for (int r = 0; r < rank; ++r) local += s.domainOf[r] == s.domainOf[rank];
  return local;
}

}  // namespace

void hierarchicalBroadcast(Plan& plan, const Request& req, const Shape& s) {
  const std::size_t es = dataTypeSize(req.dt);
  const int D = s.numDomains(), R = s.minDomainSize();
  const bool direct = plan.path != Path::Staged;
  const std::uint64_t S = plan.count * es;
  beginDomainPlan(plan, req, s, direct ? plan.count : req.windowBytes / domainSlots(s, req) / es, kNeedRootSend,
                  Pieces::Vector,
                  double(S));  // the root only stages
  if (!direct) plan.steps.back().runner = Runner::Root;  // while the others copy earlier fragments
  const double F = plan.fragments;
  if (D > 1) {
    Step& rail =
        addStep(plan, StepKind::RailCopy, Group::Rail, "each rail of the root's domain sends its slice to every domain",
                Pieces::Vector, Buffer::Window, Buffer::Window);
    rail.latencySteps = F;
    rail.busiestBytes = (D - 1) * sumOverFragments(plan, [&](std::size_t n) { return ceilDiv(n, R) * es; });
    rail.scaleOutBytes = (D - 1) * S;
    rail.scaleUpBytes = static_cast<std::uint64_t>((D - 1) * otherSlices(plan, localRankOf(s, req.root), R, es));
    addPublish(plan, Pieces::Vector, 0);
  }
  Step& gather = addStep(plan, StepKind::DomainGather, Group::Domain, "every rank copies the fragment", Pieces::Vector,
                         direct ? Buffer::PeerSend : Buffer::Window, Buffer::Recv);
  gather.latencySteps = direct ? 0 : F;  // direct: the root's send buffer is ready since Agree
  gather.busiestBytes = double(S);
  gather.runner = Runner::Others;  // the root's own copy, out of place, is local and not priced
  gather.scaleUpBytes = overDomains(s, [&](std::uint64_t k) { return (k - 1) * S; });
  if (plan.path == Path::CrossMemory) gather.crossMemoryReads = 1;
  endDomainPlan(plan);
}

void hierarchicalReduce(Plan& plan, const Request& req, const Shape& s) {
  const std::size_t es = dataTypeSize(req.dt);
  const int D = s.numDomains(), R = s.minDomainSize(), kmax = s.maxDomainSize();
  const bool across = D > 1, direct = plan.path != Path::Staged;
  const std::uint32_t slots = domainSlots(s, req);
  const std::uint64_t S = plan.count * es;
  std::size_t capacity = direct ? plan.count : req.windowBytes / slots / es;
  if (across) {  // the root's domain receives D - 1 partials of a slice, each up to n / R + 1 elements
    const std::size_t perPartial = receiveBytes(req.windowBytes, D) / slots / es / (D - 1);
    capacity = std::min(capacity, (perPartial > 1 ? perPartial - 1 : 1) * R);
  }
  beginDomainPlan(plan, req, s, capacity, kNeedSend | kNeedRootRecv, Pieces::Vector, double(S));
  const double F = plan.fragments;
  Step& reduce = addStep(plan, StepKind::DomainReduce, Group::Domain, "each rail's slice reduced over its domain",
                         Pieces::Vector, direct ? Buffer::PeerSend : Buffer::Window,
                         across   ? Buffer::Accumulate
                         : direct ? Buffer::PeerRecv
                                  : Buffer::Recv);  // the root's part
  reduce.finalizes = !across;
  reduce.latencySteps = direct ? 0 : F;  // direct: the send buffers are ready since Agree
  reduce.busiestBytes = double(kmax - 1) * S / R;
  reduce.scaleUpBytes = overDomains(s, [&](std::uint64_t k) { return (k - 1) * S; });
  describeExchange(reduce, Exchange::InDomain, double(S) / R);
  if (across) {  // into the root's slice; the others into their holder's window
    Step& rail = addStep(plan, StepKind::RailReduce, Group::Rail, "each rail sends its partial to the root's domain",
                         Pieces::Vector, Buffer::Accumulate, Buffer::Recv);
    rail.finalizes = true;
    rail.latencySteps = F;
    rail.busiestBytes = (D - 1) * sumOverFragments(plan, [&](std::size_t n) { return ceilDiv(n, R) * es; });
    rail.scaleOutBytes = (D - 1) * S;
  }
  if (direct) return endDomainPlan(plan);
  addPublish(plan, Pieces::Vector, 0);
  Step& gather = addStep(plan, StepKind::DomainGather, Group::Domain, "the root copies the slices", Pieces::Vector,
                         Buffer::Window, Buffer::Recv);
  gather.latencySteps = F;
  gather.runner = Runner::Root;
  gather.busiestBytes = otherSlices(plan, localRankOf(s, req.root), R, es);
  gather.scaleUpBytes = static_cast<std::uint64_t>(gather.busiestBytes);
}

}  // namespace tiercc::plans
