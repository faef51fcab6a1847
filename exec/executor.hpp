// The executor: runs any plan on the two tiers. It walks the plan's steps fragment by fragment,
// keeping Plan::slots fragments in flight so that one fragment's domain steps (tier 0) run while
// another's rail transfers (tier 1) are on the wire; it runs the domain's round protocol, gives
// every wait a deadline, and counts what each step moved and how long it took. With a choice of
// paths it first agrees with the domain on the one every rank can take.
#pragma once

#include "exec/call.hpp"
#include "plan/selector.hpp"

namespace tiercc {

/// Runs `choice` for `args`, recording in ctx.stats the plan that ran and its steps' counts.
void execute(ExecContext& ctx, ExecState& state, const Choice& choice, const CallArgs& args);

}  // namespace tiercc
