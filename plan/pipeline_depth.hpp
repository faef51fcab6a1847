// How deep a plan pipelines: the fragments in flight across domains (Plan::slots) and with them
// the fragment size (each fragment has its 1/slots of the window and scratch), chosen by the cost
// model. More slots hide more of the rails' latency behind other fragments, but cut smaller
// fragments, each paying its latency steps again; the price of each depth decides. The selector
// (for the runtime) and tiercc-sim both build plans through here, so they run and price the same
// depth.
#pragma once

#include "plan/cost_model.hpp"
#include "plan/plan.hpp"

namespace tiercc {

/// The plan of `a` for `req` (buildPlan's preconditions) on the staged path, with predictedSeconds
/// set: at the depth Request::slots asks for, or with slots 0 at the depth from 2 to kMaxSlots
/// that `model` prices fastest (the shallowest of equal prices; a depth whose fragments do not
/// fit is skipped). A plan that does not pipeline (one domain, flat algorithms) is built once.
Plan buildAtBestDepth(Algorithm a, const Request& req, const Shape& shape, const TierModel& model);

/// `req` with the depth of `staged` (a plan buildAtBestDepth made): every path's plan of a call
/// must cut the same fragments, so that domains on different paths exchange the same rail messages.
Request atDepthOf(const Plan& staged, Request req);

}  // namespace tiercc
