// How the executor runs each kind of step (internal to exec/). A step's `run` does its work for
// one fragment; a step that posts transfers (the rail steps) returns with them in flight, and
// its `finish` completes them when a later step depends on it. Agree and Close belong to the
// executor itself (they choose and end the call's path).
#pragma once

#include "exec/call.hpp"

namespace tiercc {

namespace steps {
/// A step's work for one fragment (run), or the completion of what it posted (finish).
using Fn = void(Call& call, const Step& step, Fragment& f);
// Inside the domain (domain_steps.cpp, one_shot.cpp).
Fn stage, domainReduce, publish, domainGather, oneShot;
// Along the rails and on this rank (rail_steps.cpp).
Fn railReducePost, railReduceFinish, railCopyPost, railCopyFinish, localReduce;
// Across domains, every rank with every rank of the other domains (cross_steps.cpp).
Fn crossExchangePost, crossExchangeFinish;
// Flat patterns over the transport (ring_steps.cpp, butterfly_steps.cpp, tree_steps.cpp,
// bruck_steps.cpp, exchange_steps.cpp).
Fn ringReduceScatter, ringAllgather, fold, halvingReduce, doublingGather, doublingReduce, unfold;
Fn knomialBroadcast, knomialReduce, bruckAllgather, bruckRotate, bruckAlltoall, bruckPlace;
Fn pairwise, dissemination, pointToPoint;
}  // namespace steps

}  // namespace tiercc
