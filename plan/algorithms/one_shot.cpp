// One-shot allreduce (and barrier) for small messages, where synchronisations cost more than
// bytes: every rank stages its input and reduces ALL of its domain's inputs itself (one wait
// instead of reduce-scatter's and allgather's two), then exchanges the domain's result with its
// rail peers and reduces the D results in domain order. Each rail carries the whole message, k
// times the bound in all: the right trade only for small messages, and the statistics say so.
#include "core/errors.hpp"
#include "plan/build.hpp"

namespace tiercc::plans {

std::string oneShotUnsupported(const Request& req, const Shape& s) {
  const std::size_t bytes = req.coll == Collective::Barrier ? 1 : req.count * dataTypeSize(req.dt);
  const std::size_t domains = std::max(1, s.numDomains());
  if (!s.uniform()) return "one_shot needs domains of equal size (every rank needs a rail peer)";
  if (bytes * domains > req.windowBytes)
    return concat("one_shot needs the ", domains, " domain results of ", bytes, " B to fit the window (",
                  req.windowBytes, " B)");
  return "";
}

void oneShot(Plan& plan, const Request& req, const Shape& s) {
  const std::uint64_t S = plan.count * dataTypeSize(req.dt), D = s.numDomains(), N = s.size(), k = s.maxDomainSize();
  cutFragments(plan, plan.count, 1);
  plan.rounds = Rounds::InStep;
  Step& reduce = addStep(plan, StepKind::OneShot, Group::Domain, "every rank reduces its whole domain", Pieces::Whole,
                         Buffer::Send, D > 1 ? Buffer::Receive : Buffer::Recv);
  reduce.finalizes = D == 1;
  reduce.latencySteps = 1;
  reduce.busiestBytes = double((k - 1) * S);
  reduce.localBytes = double(S);
  reduce.scaleUpBytes = N * (k - 1) * S;
  describeExchange(reduce, Exchange::InDomain, double(S));
  if (D == 1) return;
  Step& rail = addStep(plan, StepKind::RailCopy, Group::Rail, "the domain's result to every rail peer", Pieces::Whole,
                       Buffer::Receive, Buffer::Receive);
  rail.latencySteps = 1;
  rail.busiestBytes = double((D - 1) * S);
  rail.scaleOutBytes = N * (D - 1) * S;
  describeExchange(rail, Exchange::Rail, double(S));
  Step& local = addStep(plan, StepKind::LocalReduce, Group::Self, "the domains' results in domain order", Pieces::Whole,
                        Buffer::Receive, Buffer::Recv);
  local.finalizes = true;
}

}  // namespace tiercc::plans
