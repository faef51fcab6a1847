// Every rank stamps the call it runs (its sequence number and shape) into its mailbox before it
// signals anything for the call; whenever a rank has waited on a domain peer's flag, it reads the
// peer's stamp and compares. Ranks that called different collectives, counts, datatypes, ops or
// roots would otherwise compute garbage or wait out their deadline: here the first wait between
// them raises InvalidArgument naming both calls, on whichever path the call takes (staged,
// one-shot, direct), and the failure verdict carries it to every other rank.
#pragma once

#include "exec/call_shape.hpp"
#include "exec/context.hpp"

namespace tiercc {

/// Stamps this rank's call; ctx.shape must stay valid for the call. Nothing where the domain
/// has no mailbox.
void stampCall(ExecContext& ctx, const CallShape& shape);
/// After a wait on local rank `peer` for this call: InvalidArgument if its stamp says it runs
/// another shape in this call, or an earlier call (the ranks' sequences of calls differ). A peer
/// already in a later call, or a stamp caught being rewritten, says nothing.
void comparePeerCall(ExecContext& ctx, int peer);

}  // namespace tiercc
