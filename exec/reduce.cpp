// Hierarchical, rail-parallel reduce to one root. Per window-sized round: every rank stages its
// chunk; local rank j (j < number of rails) reduces slice j over its domain's windows; outside
// the root's domain it sends that partial along rail j to the root's domain, where rail j
// reduces the partials in domain order and publishes the slice; the root copies the slices
// out. Each non-root domain sends its data across once (the bound), over all rails.
#include <cstring>

#include "exec/direct.hpp"
#include "exec/round.hpp"
#include "core/reduce.hpp"

namespace tiercc {

void reduceHierarchical(CollContext& ctx, const void* send, void* recv, std::size_t count, DataType dt,
                        ReduceOp op, int root) {
  if (directReduce(ctx, send, recv, count, dt, op, root)) return;
  const Topology& t = ctx.topo;
  Domain& dom = ctx.domain;
  const std::size_t es = dataTypeSize(dt);
  const int k = dom.size(), me = dom.localRank(), rails = t.minDomainSize(), numDomains = t.numDomains();
  const int rootDomain = t.domainOf(root);
  const bool inRootDomain = t.domain() == rootDomain;
  // The rail members of the root's domain receive D-1 partials of their slice.
  const std::size_t perRound =
      std::min(dom.windowBytes() / es, ctx.scratch.receive.size() / es / std::max(1, numDomains - 1) * rails);
  const auto* in = static_cast<const std::byte*>(send);
  auto* out = static_cast<std::byte*>(recv);

  std::uint64_t chunk = 0;
  for (std::size_t offset = 0; offset < count; offset += perRound, ++chunk) {
    const std::size_t n = std::min(perRound, count - offset);
    const std::uint32_t epoch = beginRound(ctx);
    std::memcpy(dom.window(me), in + offset * es, n * es);
    dom.signal(kFlagStaged, epoch);

    if (me < rails) {
      auto [b, e] = partition(n, rails, me);
      const std::size_t len = e - b, off = b * es;
      std::byte* acc = ctx.scratch.accumulate.data();
      for (int p = 0; p < k; ++p) waitPeer(ctx, p, kFlagStaged, epoch);
      if (k == 1) std::memcpy(acc, dom.window(0) + off, len * es);
      else reduce3(acc, dom.window(0) + off, dom.window(1) + off, len, dt, op);
      for (int p = 2; p < k; ++p) reduceInto(acc, dom.window(p) + off, len, dt, op);
      ctx.movedUp((k - 1) * len * es);
      TransferBatch batch(ctx);
      if (!inRootDomain) {
        batch.send(t.rankAt(rootDomain, me), roundTag(ctx, chunk, 0), acc, len * es);
        batch.wait();
      } else {
        // Partials arrive per domain; reduce all of them in domain order.
        std::byte* rx = ctx.scratch.receive.data();
        for (int d = 0, slot = 0; d < numDomains; ++d)
          if (d != rootDomain) batch.recv(t.rankAt(d, me), roundTag(ctx, chunk, 0), rx + (slot++) * len * es, len * es);
        batch.wait();
        std::byte* result = dom.window(me) + off;  // our own input slice is no longer needed by anyone
        bool first = true;
        for (int d = 0, slot = 0; d < numDomains; ++d) {
          const std::byte* part = d == rootDomain ? acc : rx + (slot++) * len * es;
          if (first) std::memcpy(result, part, len * es);
          else reduceInto(result, part, len, dt, op);
          first = false;
        }
        if (op == ReduceOp::Avg) finishAvg(result, len, dt, t.size());
        dom.signal(kFlagReduced, epoch);
      }
    }
    if (t.rank() == root) {
      for (int j = 0; j < rails; ++j) {
        auto [jb, je] = partition(n, rails, j);
        waitPeer(ctx, j, kFlagReduced, epoch);
        std::memcpy(out + (offset + jb) * es, dom.window(j) + jb * es, (je - jb) * es);
        if (j != me) ctx.movedUp((je - jb) * es);
      }
    }
    endRound(ctx, epoch);
  }
  if (!inRootDomain) ctx.stats.scaleOutBoundBytes += count * es / t.domainSize();
}

}  // namespace tiercc
