// How deep a plan pipelines: the fragments in flight (Plan::slots) and their size,
// chosen by the cost model. Each fragment has its 1/slots of the window and scratch, and fills all
// of it, or of a window larger than the default (TIERCC_SHM_CHUNK=auto may take one) a half, a
// quarter, ... down to the default's (Plan::windowBytes): so a larger window only ever adds room,
// and a call of a few windows' worth may still cut the fragments that fill its pipeline sooner.
// More slots hide more of the rails' latency behind other fragments (and inside one domain let a
// broadcast's root run ahead of its readers), but cut smaller fragments, each paying its latency
// steps again. The price of each depth and size decides. (Not smaller than the default's: the
// model prices a rail message's latency as hidden in flight, not the CPU time a transport spends
// on each, so it would cut ever smaller fragments.) The selector (for the runtime) and tiercc-sim
// both build plans through here, so they run and price the same.
#pragma once

#include "plan/cost_model.hpp"
#include "plan/plan.hpp"

namespace tiercc {

/// The plan of `a` for `req` (buildPlan's preconditions) on the staged path, with predictedSeconds
/// set: at the depth Request::slots asks for, or with slots 0 at the depth from 2 (inside one
/// domain, for a staged plan: 1) to kMaxSlots,
/// and of the whole window or a power-of-two share of it no smaller than kDefaultWindowBytes, that
/// `model` prices fastest (of equal prices the shallowest, then the largest fragments; one whose
/// fragments do not fit is skipped). A plan that does not pipeline (flat algorithms, direct
/// paths inside one domain) is built once.
Plan buildAtBestDepth(Algorithm a, const Request& req, const Shape& shape, const TierModel& model);

/// `req` with the depth and fragments of `staged` (a plan buildAtBestDepth made): every path's
/// plan of a call must cut the same fragments, so that domains on different paths exchange the
/// same rail messages.
Request atDepthOf(const Plan& staged, Request req);

}  // namespace tiercc
