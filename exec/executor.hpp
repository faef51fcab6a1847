// The executor: runs a collective by the algorithm the selector chose for it, on the real
// tiers. Hierarchical algorithms are fused implementations (collectives/*.cpp) that run
// their plan's three steps round by round through the domain windows; flat ones run their
// pattern over the transport (exec/flat/).
#pragma once

#include "exec/context.hpp"
#include "plan/plan.hpp"

namespace tiercc {

/// One collective call, as the public API received it (validated).
struct CollArgs {
  Collective coll = Collective::AllReduce;
  const void* send = nullptr;
  void* recv = nullptr;
  std::size_t count = 0;  ///< as in Request::count
  DataType dt = DataType::F32;
  ReduceOp op = ReduceOp::Sum;
  int root = 0;
  // alltoallv only: element counts and displacements per rank
  const std::size_t* sendCounts = nullptr;
  const std::size_t* sendDispls = nullptr;
  const std::size_t* recvCounts = nullptr;
  const std::size_t* recvDispls = nullptr;
};

/// Chooses the algorithm (ctx.selector, TIERCC_ALGO) and runs it; records its name in
/// ctx.stats.algorithm.
void runCollective(CollContext& ctx, const CollArgs& args);

}  // namespace tiercc
