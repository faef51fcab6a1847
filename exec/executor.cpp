// The executor (see executor.hpp).
#include "exec/executor.hpp"

#include "exec/flat/flat.hpp"
#include "plan/selector.hpp"

namespace tiercc {
namespace {

// Bytes this rank sends to other domains: the slow-tier bound of all-to-allv, which has no
// closed form (it depends on every rank's counts).
std::uint64_t crossDomainSendBytes(const CollContext& ctx, const CollArgs& a) {
  std::uint64_t n = 0;
  for (int r = 0; r < ctx.topo.size(); ++r)
    if (ctx.topo.domainOf(r) != ctx.topo.domain()) n += a.sendCounts[r];
  return n * dataTypeSize(a.dt);
}

void runHierarchical(CollContext& ctx, const CollArgs& a) {
  switch (a.coll) {
    case Collective::AllReduce:
      return allreduceHierarchical(ctx, a.send, a.recv, a.count, a.dt, a.op);
    case Collective::ReduceScatter:
      return reduceScatterHierarchical(ctx, a.send, a.recv, a.count, a.dt, a.op);
    case Collective::AllGather:
      return allgatherHierarchical(ctx, a.send, a.recv, a.count, a.dt);
    case Collective::Broadcast:
      return broadcastHierarchical(ctx, a.send, a.recv, a.count, a.dt, a.root);
    case Collective::Reduce:
      return reduceHierarchical(ctx, a.send, a.recv, a.count, a.dt, a.op, a.root);
    case Collective::AllToAll:
      return alltoallHierarchical(ctx, a.send, a.recv, a.count, a.dt);
    case Collective::Barrier: {
      std::uint8_t token = 1, result = 0;
      return allreduceHierarchical(ctx, &token, &result, 1, DataType::U8, ReduceOp::Max);
    }
    case Collective::AllToAllv:
      break;
  }
  fail(ErrorCode::Internal, ctx.what, ": no hierarchical implementation of ", toString(a.coll));
}

void runFlat(CollContext& ctx, const CollArgs& a, std::string_view algo) {
  const Group g = Group::world(ctx.topo);
  const int radix = ctx.tuning.knomialRadix;
  switch (a.coll) {
    case Collective::AllReduce:
      if (algo == "ring") return ringAllreduce(ctx, g, a.send, a.recv, a.count, a.dt, a.op);
      if (algo == "halving_doubling") return halvingDoublingAllreduce(ctx, g, a.send, a.recv, a.count, a.dt, a.op);
      if (algo == "recursive_doubling") return recursiveDoublingAllreduce(ctx, g, a.send, a.recv, a.count, a.dt, a.op);
      break;
    case Collective::ReduceScatter:
      if (algo == "ring") return ringReduceScatter(ctx, g, a.send, a.recv, a.count, a.dt, a.op);
      break;
    case Collective::AllGather:
      if (algo == "ring") return ringAllgather(ctx, g, a.send, a.recv, a.count, a.dt);
      if (algo == "bruck") return bruckAllgather(ctx, g, a.send, a.recv, a.count, a.dt);
      break;
    case Collective::Broadcast:
      if (algo == "knomial") return knomialBroadcast(ctx, g, a.send, a.recv, a.count, a.dt, a.root, radix);
      break;
    case Collective::Reduce:
      if (algo == "knomial") return knomialReduce(ctx, g, a.send, a.recv, a.count, a.dt, a.op, a.root, radix);
      break;
    case Collective::AllToAll:
      if (algo == "pairwise") return pairwiseAlltoall(ctx, g, a.send, a.recv, a.count, a.dt);
      if (algo == "bruck") return bruckAlltoall(ctx, g, a.send, a.recv, a.count, a.dt);
      break;
    case Collective::AllToAllv:
      if (algo == "pairwise") {
        pairwiseAlltoallv(ctx, g, a.send, a.sendCounts, a.sendDispls, a.recv, a.recvCounts, a.recvDispls, a.dt);
        ctx.stats.scaleOutBoundBytes += crossDomainSendBytes(ctx, a);
        return;
      }
      break;
    case Collective::Barrier:
      if (algo == "dissemination") return disseminationBarrier(ctx, g);
      break;
  }
  fail(ErrorCode::Internal, ctx.what, ": no implementation of ", toString(a.coll), ":", algo);
}

}  // namespace

void runCollective(CollContext& ctx, const CollArgs& a) {
  Request req;
  req.coll = a.coll;
  req.count = a.count;
  req.dt = a.dt;
  req.root = a.root;
  req.radix = ctx.tuning.knomialRadix;
  req.windowBytes = ctx.domain.windowBytes();
  if (a.coll == Collective::AllToAllv) {
    // Every rank must price the same request: the selector sees the job's shape, not the
    // counts, which differ per rank.
    req.count = 0;
  }
  if (a.coll == Collective::Barrier) req.dt = DataType::U8;
  const std::string_view algo = ctx.selector->choose(req);
  ctx.stats.algorithm = algo;
  if (algo == "hierarchical") return runHierarchical(ctx, a);
  if (algo == "one_shot") {
    if (a.coll == Collective::Barrier) {
      std::uint8_t token = 1, result = 0;
      return allreduceOneShot(ctx, &token, &result, 1, DataType::U8, ReduceOp::Max);
    }
    return allreduceOneShot(ctx, a.send, a.recv, a.count, a.dt, a.op);
  }
  runFlat(ctx, a, algo);
}

}  // namespace tiercc
