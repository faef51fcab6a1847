// Send and receive: one message between two ranks over the transport, on the scale-up tier when
// they share a domain. The sender counts it (Request::root is this rank, Request::peer the other).
#include "plan/algorithms/algorithms.hpp"
#include "plan/build.hpp"

namespace tiercc::plans {

void pointToPoint(Plan& plan, const Request& req, const Shape& s) {
  const bool send = req.coll == Collective::Send;
  oneFragment(plan);  // an empty message travels too
  Step& st = addFlatStep(plan, send ? StepKind::Send : StepKind::Recv,
                         send ? "to rank " + std::to_string(req.peer) : "from rank " + std::to_string(req.peer));
  st.group = Group::Pair;
  addTransfer(st, s, req.root, req.peer, send ? plan.count * dataTypeSize(req.dt) : 0);
  st.latencySteps = 1;
  st.busiestBytes = double(plan.count * dataTypeSize(req.dt));
}

}  // namespace tiercc::plans
