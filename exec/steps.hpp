// How the executor runs each kind of step (internal to exec/). A step's `run` does its work for
// one fragment; a step that posts transfers (the rail steps) returns with them in flight, and
// its `finish` completes them when a later step depends on it. Agree and Close belong to the
// executor itself (they choose and end the call's path).
#pragma once

#include "exec/call.hpp"

namespace tiercc {

struct StepRunner {
  void (*run)(Call& call, const Step& step, Fragment& f) = nullptr;
  void (*finish)(Call& call, const Step& step, Fragment& f) = nullptr;  ///< null: run completes it
};

/// The runner of `kind`; every kind but Agree and Close has one.
const StepRunner& runnerFor(StepKind kind);

namespace steps {
// Inside the domain (domain_steps.cpp, one_shot.cpp).
void stage(Call&, const Step&, Fragment&);
void domainReduce(Call&, const Step&, Fragment&);
void domainPack(Call&, const Step&, Fragment&);
void publish(Call&, const Step&, Fragment&);
void domainGather(Call&, const Step&, Fragment&);
void oneShot(Call&, const Step&, Fragment&);
// Along the rails and on this rank (rail_steps.cpp).
void railReducePost(Call&, const Step&, Fragment&);
void railReduceFinish(Call&, const Step&, Fragment&);
void railCopyPost(Call&, const Step&, Fragment&);
void railCopyFinish(Call&, const Step&, Fragment&);
void localReduce(Call&, const Step&, Fragment&);
// Flat patterns over the transport (ring_steps.cpp, butterfly_steps.cpp, tree_steps.cpp,
// bruck_steps.cpp, exchange_steps.cpp).
void ringReduceScatter(Call&, const Step&, Fragment&);
void ringAllgather(Call&, const Step&, Fragment&);
void fold(Call&, const Step&, Fragment&);
void halvingReduce(Call&, const Step&, Fragment&);
void doublingGather(Call&, const Step&, Fragment&);
void doublingReduce(Call&, const Step&, Fragment&);
void unfold(Call&, const Step&, Fragment&);
void knomialBroadcast(Call&, const Step&, Fragment&);
void knomialReduce(Call&, const Step&, Fragment&);
void bruckAllgather(Call&, const Step&, Fragment&);
void bruckRotate(Call&, const Step&, Fragment&);
void bruckAlltoall(Call&, const Step&, Fragment&);
void bruckPlace(Call&, const Step&, Fragment&);
void pairwise(Call&, const Step&, Fragment&);
void dissemination(Call&, const Step&, Fragment&);
void pointToPoint(Call&, const Step&, Fragment&);
}  // namespace steps

}  // namespace tiercc
