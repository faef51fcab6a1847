// Recursive-doubling allreduce on the whole vector: log2 p2 exchanges of everything with the
// peer at distance 1, 2, 4, ... over the largest power of two p2 <= p; the other p - p2 ranks
// fold into a partner first and get the result back last (pattern/halving_doubling.hpp).
// Latency-optimal, for small messages: each rank sends the whole vector log2 p2 times.
//
// Fragments fit the receive scratch. At every step both peers compute op(lower virtual rank's
// data, higher's) from the same two operands, so all ranks hold the same bits throughout.
#include "exec/bound.hpp"
#include "exec/flat/flat_detail.hpp"

namespace tiercc {

void recursiveDoublingAllreduce(CollContext& ctx, const Group& g, const void* send, void* recv, std::size_t count,
                                DataType dt, ReduceOp op) {
  const int p = g.size(), me = g.me;
  const std::size_t es = dataTypeSize(dt);
  const auto* in = static_cast<const std::byte*>(send);
  auto* out = static_cast<std::byte*>(recv);
  const pattern::Butterfly bf(p);
  const int L = bf.steps(), v = bf.virtualRank(me);
  if (!bf.folds(me)) flat::copyUnlessSame(out, in, count * es);
  if (p > 1) {
    flat::requireTransport(ctx, g);
    std::byte* rx = ctx.scratch.receive.data();
    const std::size_t perFragment = flat::fragmentElements(ctx, 1, es);
    const int steps = 1 + L + 1;  // fold, doubling, unfold
    std::uint64_t fragment = 0;
    for (std::size_t offset = 0; offset < count; offset += perFragment, ++fragment) {
      const std::size_t n = std::min(perFragment, count - offset), bytes = n * es;
      std::byte* base = out + offset * es;
      flat::foldIn(ctx, g, bf, in + offset * es, base, n, perFragment, dt, op, fragment, 0, steps);
      if (v >= 0) {
        for (int s = 0; s < L; ++s) {
          flat::renewDeadline(ctx);
          const int pv = bf.peer(v, s);
          const std::uint64_t tag = flat::tag(ctx, fragment, 1 + s, steps);
          TransferBatch batch(ctx);
          batch.send(g.ranks[bf.realRank(pv)], tag, base, bytes);
          batch.recv(g.ranks[bf.realRank(pv)], tag, rx, bytes);
          batch.wait();
          if (v < pv)
            reduce3(base, base, rx, n, dt, op);
          else
            reduce3(base, rx, base, n, dt, op);
        }
        if (op == ReduceOp::Avg) finishAvg(base, n, dt, p);
      }
      flat::foldOut(ctx, g, bf, base, bytes, flat::tag(ctx, fragment, steps - 1, steps));
    }
  } else if (op == ReduceOp::Avg) {
    finishAvg(out, count, dt, 1);
  }
  if (flat::isWholeCollective(ctx, g)) ctx.stats.scaleOutBoundBytes += bound::allreduce(ctx.topo, count * es);
}

}  // namespace tiercc
