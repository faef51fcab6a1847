// K-nomial tree broadcast and reduce over a group (pattern/knomial.hpp): ceil(log_k p) rounds
// for any p, root and radix k >= 2; latency-optimal for small messages, and pipelined by
// fragments for larger ones (a rank forwards fragment f while its parent sends f + 1).
//
// Broadcast receives straight into the output and forwards from there, children of the
// highest level first. Reduce accumulates op(own, children...) in the accumulate scratch (the
// root: in its output), children in level order, and passes the partial up; a leaf sends its
// input as it is. Fragments fit the scratch either way.
#include "plan/pattern/knomial.hpp"

#include "exec/bound.hpp"
#include "exec/flat/flat_detail.hpp"

namespace tiercc {
namespace {

void requireRadix(const CollContext& ctx, int radix) {
  if (radix < 2) fail(ErrorCode::InvalidArgument, ctx.what, ": the k-nomial radix must be at least 2, got ", radix);
}

}  // namespace

void knomialBroadcast(CollContext& ctx, const Group& g, const void* send, void* recv, std::size_t count, DataType dt,
                      int root, int radix) {
  requireRadix(ctx, radix);
  const int p = g.size(), me = g.me;
  const std::size_t es = dataTypeSize(dt);
  auto* out = static_cast<std::byte*>(recv);
  if (me == root) flat::copyUnlessSame(out, send, count * es);
  if (p > 1 && count > 0) {
    flat::requireTransport(ctx, g);
    const pattern::KnomialTree tree(p, root, radix);
    const int parent = tree.parent(me), myLevel = tree.level(me);
    const std::size_t perFragment = flat::fragmentElements(ctx, 1, es);
    std::uint64_t fragment = 0;
    for (std::size_t offset = 0; offset < count; offset += perFragment, ++fragment) {
      flat::renewDeadline(ctx);
      const std::size_t bytes = std::min(perFragment, count - offset) * es;
      std::byte* data = out + offset * es;
      const std::uint64_t tag = flat::tag(ctx, fragment, 0, 1);
      TransferBatch batch(ctx);
      if (parent >= 0) {
        batch.recv(g.ranks[parent], tag, data, bytes);
        batch.wait();
      }
      for (int l = myLevel - 1; l >= 0; --l)
        for (int c = 1; c < radix; ++c) {
          const int child = tree.child(me, l, c);
          if (child < 0) break;
          batch.send(g.ranks[child], tag, data, bytes);
        }
      batch.wait();
    }
  }
  if (flat::isWholeCollective(ctx, g))
    ctx.stats.scaleOutBoundBytes += bound::broadcast(ctx.topo, count * es, g.ranks[root]);
}

void knomialReduce(CollContext& ctx, const Group& g, const void* send, void* recv, std::size_t count, DataType dt,
                   ReduceOp op, int root, int radix) {
  requireRadix(ctx, radix);
  const int p = g.size(), me = g.me;
  const std::size_t es = dataTypeSize(dt);
  const auto* in = static_cast<const std::byte*>(send);
  auto* out = static_cast<std::byte*>(recv);
  if (p == 1) {
    flat::copyUnlessSame(out, in, count * es);  // Avg over one rank: nothing to divide
  } else if (count > 0) {
    flat::requireTransport(ctx, g);
    const pattern::KnomialTree tree(p, root, radix);
    const int parent = tree.parent(me), myLevel = tree.level(me);
    const bool leaf = tree.numChildren(me) == 0;
    std::byte* rx = ctx.scratch.receive.data();
    const std::size_t perFragment = flat::fragmentElements(ctx, 1, es, true);
    std::uint64_t fragment = 0;
    for (std::size_t offset = 0; offset < count; offset += perFragment, ++fragment) {
      flat::renewDeadline(ctx);
      const std::size_t n = std::min(perFragment, count - offset), bytes = n * es;
      const std::byte* mine = in + offset * es;
      const std::uint64_t tag = flat::tag(ctx, fragment, 0, 1);
      TransferBatch batch(ctx);
      if (leaf) {
        batch.send(g.ranks[parent], tag, mine, bytes);
        batch.wait();
        continue;
      }
      // Only the root writes its output: other ranks' receive buffers stay untouched.
      std::byte* acc = me == root ? out + offset * es : ctx.scratch.accumulate.data();
      flat::copyUnlessSame(acc, mine, bytes);
      for (int l = 0; l < myLevel; ++l)
        for (int c = 1; c < radix; ++c) {
          const int child = tree.child(me, l, c);
          if (child < 0) break;
          flat::renewDeadline(ctx);
          batch.recv(g.ranks[child], tag, rx, bytes);
          batch.wait();
          reduceInto(acc, rx, n, dt, op);
        }
      if (me == root) {
        if (op == ReduceOp::Avg) finishAvg(acc, n, dt, p);
      } else {
        batch.send(g.ranks[parent], tag, acc, bytes);
        batch.wait();
      }
    }
  }
  if (flat::isWholeCollective(ctx, g))
    ctx.stats.scaleOutBoundBytes += bound::reduce(ctx.topo, count * es, g.ranks[root]);
}

}  // namespace tiercc
