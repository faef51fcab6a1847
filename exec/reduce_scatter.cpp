// Hierarchical, rail-parallel reduce-scatter. Per round, a chunk of every block: each rank
// stages the chunk of all N blocks in its window; rail j of each domain reduces, over its
// domain's windows, the blocks whose owner has local rank l with l % rails == j; partials of
// blocks owned in other domains go along rail j to the owner's domain, where rail j reduces
// them in domain order and publishes the result; the owner copies its block out. Each domain
// sends only partials of remote blocks: (D-1)/D x S per domain for uniform domains, the bound.
#include <cstring>

#include "exec/direct.hpp"
#include "exec/round.hpp"
#include "core/reduce.hpp"

namespace tiercc {
namespace {

int ceilDiv(int a, int b) { return (a + b - 1) / b; }

}  // namespace

void reduceScatterHierarchical(CollContext& ctx, const void* send, void* recv, std::size_t blockCount,
                               DataType dt, ReduceOp op) {
  if (directReduceScatter(ctx, send, recv, blockCount, dt, op)) return;
  const Topology& t = ctx.topo;
  Domain& dom = ctx.domain;
  const std::size_t es = dataTypeSize(dt);
  const int n = t.size(), k = dom.size(), me = dom.localRank(), rails = t.minDomainSize();
  const int myDomain = t.domain(), numDomains = t.numDomains();
  int maxDomain = 0;
  for (int d = 0; d < numDomains; ++d) maxDomain = std::max(maxDomain, t.domainSize(d));
  const int resultSlots = ceilDiv(maxDomain, rails);
  std::size_t perRound = elementsPerRound(dom.windowBytes(), n + resultSlots, es);
  if (numDomains > 1)
    perRound = std::min(perRound, elementsPerRound(ctx.scratch.receive.size(), (numDomains - 1) * resultSlots, es));
  const auto* in = static_cast<const std::byte*>(send);
  auto* out = static_cast<std::byte*>(recv);

  // The blocks this rank reduces, in rank order (the order messages travel in, per rail).
  std::vector<int> handled;
  if (me < rails)
    for (int b = 0; b < n; ++b)
      if (t.localRankOf(b) % rails == me) handled.push_back(b);

  std::uint64_t chunk = 0;
  for (std::size_t offset = 0; offset < blockCount; offset += perRound, ++chunk) {
    const std::size_t len = std::min(perRound, blockCount - offset), bytes = len * es;
    const std::uint32_t epoch = beginRound(ctx);
    for (int b = 0; b < n; ++b) std::memcpy(dom.window(me) + b * bytes, in + (b * blockCount + offset) * es, bytes);
    dom.signal(kFlagStaged, epoch);
    std::byte* results = dom.window(me) + n * bytes;

    if (!handled.empty()) {
      for (int p = 0; p < k; ++p) waitPeer(ctx, p, kFlagStaged, epoch);
      std::byte* partials = ctx.scratch.accumulate.data();
      std::byte* rx = ctx.scratch.receive.data();
      TransferBatch batch(ctx);
      std::vector<int> local;  // handled blocks owned in this domain
      for (std::size_t h = 0; h < handled.size(); ++h) {
        const int b = handled[h];
        std::byte* acc = partials + h * bytes;
        if (k == 1) std::memcpy(acc, dom.window(0) + b * bytes, bytes);
        else reduce3(acc, dom.window(0) + b * bytes, dom.window(1) + b * bytes, len, dt, op);
        for (int p = 2; p < k; ++p) reduceInto(acc, dom.window(p) + b * bytes, len, dt, op);
        ctx.movedUp((k - 1) * bytes);
        if (t.domainOf(b) != myDomain) batch.send(t.rankAt(t.domainOf(b), me), roundTag(ctx, chunk, 0), acc, bytes);
        else local.push_back(static_cast<int>(h));
      }
      for (std::size_t i = 0; i < local.size(); ++i)
        for (int d = 0, slot = 0; d < numDomains; ++d)
          if (d != myDomain)
            batch.recv(t.rankAt(d, me), roundTag(ctx, chunk, 0), rx + (i * (numDomains - 1) + slot++) * bytes, bytes);
      batch.wait();
      for (std::size_t i = 0; i < local.size(); ++i) {
        const int b = handled[local[i]];
        std::byte* result = results + (t.localRankOf(b) / rails) * bytes;
        bool first = true;
        for (int d = 0, slot = 0; d < numDomains; ++d) {
          const std::byte* part = d == myDomain ? partials + local[i] * bytes : rx + (i * (numDomains - 1) + slot++) * bytes;
          if (first) std::memcpy(result, part, bytes);
          else reduceInto(result, part, len, dt, op);
          first = false;
        }
        if (op == ReduceOp::Avg) finishAvg(result, len, dt, n);
      }
      dom.signal(kFlagReduced, epoch);
    }

    const int holder = me % rails;
    waitPeer(ctx, holder, kFlagReduced, epoch);
    std::memcpy(out + offset * es, dom.window(holder) + n * bytes + (me / rails) * bytes, bytes);
    if (holder != me) ctx.movedUp(bytes);
    endRound(ctx, epoch);
  }
  ctx.stats.scaleOutBoundBytes += static_cast<std::uint64_t>(n - k) * blockCount * es / k;
}

}  // namespace tiercc
