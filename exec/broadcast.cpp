// Hierarchical, rail-parallel broadcast. Per window-sized round: the root stages its chunk;
// in the root's domain, local rank j (j < number of rails) sends slice j straight from the
// root's window to rail j of every other domain; there the receiver puts it in its own window;
// every rank then copies the whole chunk out of the windows of its domain. Each non-root domain
// receives the chunk exactly once (the bound: S into each non-root domain), over all rails.
#include <cstring>

#include "exec/direct.hpp"
#include "exec/round.hpp"

namespace tiercc {

void broadcastHierarchical(CollContext& ctx, const void* send, void* recv, std::size_t count, DataType dt,
                           int root) {
  if (directBroadcast(ctx, send, recv, count, dt, root)) return;
  const Topology& t = ctx.topo;
  Domain& dom = ctx.domain;
  const std::size_t es = dataTypeSize(dt);
  const int me = dom.localRank(), rails = t.minDomainSize(), numDomains = t.numDomains();
  const int rootDomain = t.domainOf(root), rootLocal = t.localRankOf(root);
  const bool inRootDomain = t.domain() == rootDomain;
  const std::size_t perRound = dom.windowBytes() / es;
  const auto* in = static_cast<const std::byte*>(send);
  auto* out = static_cast<std::byte*>(recv);

  std::uint64_t chunk = 0;
  for (std::size_t offset = 0; offset < count; offset += perRound, ++chunk) {
    const std::size_t n = std::min(perRound, count - offset);
    const std::uint32_t epoch = beginRound(ctx);
    auto [b, e] = partition(n, rails, me < rails ? me : 0);
    if (inRootDomain) {
      if (t.rank() == root) {
        std::memcpy(dom.window(me), in + offset * es, n * es);
        dom.signal(kFlagStaged, epoch);
      }
      waitPeer(ctx, rootLocal, kFlagStaged, epoch);
      if (numDomains > 1 && me < rails) {
        TransferBatch batch(ctx);
        for (int d = 0; d < numDomains; ++d)
          if (d != rootDomain) batch.send(t.rankAt(d, me), roundTag(ctx, chunk, 0), dom.window(rootLocal) + b * es, (e - b) * es);
        batch.wait();
      }
      std::memcpy(out + offset * es, dom.window(rootLocal), n * es);
      if (me != rootLocal) ctx.movedUp(n * es);
    } else {
      if (me < rails) {
        TransferBatch batch(ctx);
        batch.recv(t.rankAt(rootDomain, me), roundTag(ctx, chunk, 0), dom.window(me) + b * es, (e - b) * es);
        batch.wait();
        dom.signal(kFlagReduced, epoch);
      }
      for (int j = 0; j < rails; ++j) {
        auto [jb, je] = partition(n, rails, j);
        waitPeer(ctx, j, kFlagReduced, epoch);
        std::memcpy(out + (offset + jb) * es, dom.window(j) + jb * es, (je - jb) * es);
        if (j != me) ctx.movedUp((je - jb) * es);
      }
    }
    endRound(ctx, epoch);
  }
  // Bound: S into each non-root domain, all of it sent by the root's domain.
  if (inRootDomain)
    ctx.stats.scaleOutBoundBytes += static_cast<std::uint64_t>(numDomains - 1) * count * es / t.domainSize();
}

}  // namespace tiercc
