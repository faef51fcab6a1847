// Hierarchical, rail-parallel allgather. Per round, a chunk of every rank's block: each rank
// stages its chunk in slot 0 of its window; rail j of each domain carries the chunks of its
// domain's local ranks l with l % rails == j (read from their windows) to rail j of every other
// domain, which stores them in its window's arrival slots; every rank then copies each block's
// chunk from the window that holds it. Each domain receives every remote block once (the
// bound, (D-1)/D x S per domain for uniform domains), over all rails.
#include <algorithm>
#include <cstring>

#include "exec/direct.hpp"
#include "exec/round.hpp"

namespace tiercc {
namespace {

// The remote ranks whose chunks arrive at rail `rail` of domain `domain`, in a fixed order:
// their position is the arrival slot (slot 0 is the rank's own chunk).
std::vector<int> arrivalsAt(const Topology& t, int domain, int rail, int rails) {
  std::vector<int> out;
  for (int d = 0; d < t.numDomains(); ++d) {
    if (d == domain) continue;
    for (int l = rail; l < t.domainSize(d); l += rails) out.push_back(t.rankAt(d, l));
  }
  return out;
}

int maxArrivals(const Topology& t, int rails) {
  std::size_t most = 0;
  for (int d = 0; d < t.numDomains(); ++d)
    for (int j = 0; j < rails; ++j) most = std::max(most, arrivalsAt(t, d, j, rails).size());
  return static_cast<int>(most);
}

}  // namespace

void allgatherHierarchical(CollContext& ctx, const void* send, void* recv, std::size_t blockCount, DataType dt) {
  if (directAllgather(ctx, send, recv, blockCount, dt)) return;
  const Topology& t = ctx.topo;
  Domain& dom = ctx.domain;
  const std::size_t es = dataTypeSize(dt), blockBytes = blockCount * es;
  const int me = dom.localRank(), rails = t.minDomainSize(), myDomain = t.domain();
  const std::vector<int> mine = me < rails ? arrivalsAt(t, myDomain, me, rails) : std::vector<int>{};
  const std::size_t perRound = elementsPerRound(dom.windowBytes(), 1 + maxArrivals(t, rails), es);
  const auto* in = static_cast<const std::byte*>(send);
  auto* out = static_cast<std::byte*>(recv);

  // Where rank r's chunk sits in this domain during a round: (local rank, slot).
  std::vector<std::pair<int, int>> holder(t.size());
  for (int r = 0; r < t.size(); ++r) {
    if (t.domainOf(r) == myDomain) {
      holder[r] = {t.localRankOf(r), 0};
      continue;
    }
    int rail = t.localRankOf(r) % rails;
    auto list = arrivalsAt(t, myDomain, rail, rails);
    holder[r] = {rail, 1 + static_cast<int>(std::find(list.begin(), list.end(), r) - list.begin())};
  }

  std::uint64_t chunk = 0;
  for (std::size_t offset = 0; offset < blockCount; offset += perRound, ++chunk) {
    const std::size_t n = std::min(perRound, blockCount - offset), bytes = n * es;
    const std::uint32_t epoch = beginRound(ctx);
    // In place (send == recv + rank x block) works too: our chunk is staged before any output
    // is written, and later rounds read other offsets.
    std::memcpy(dom.window(me), in + offset * es, bytes);
    dom.signal(kFlagStaged, epoch);

    if (t.numDomains() > 1 && me < rails) {
      TransferBatch batch(ctx);
      for (int d = 0; d < t.numDomains(); ++d) {
        if (d == myDomain) continue;
        for (int l = me; l < t.domainSize(myDomain); l += rails) {
          waitPeer(ctx, l, kFlagStaged, epoch);
          batch.send(t.rankAt(d, me), roundTag(ctx, chunk, 0), dom.window(l), bytes);
          if (l != me) ctx.movedUp(bytes);
        }
      }
      for (std::size_t s = 0; s < mine.size(); ++s)
        batch.recv(t.rankAt(t.domainOf(mine[s]), me), roundTag(ctx, chunk, 0), dom.window(me) + (1 + s) * bytes, bytes);
      batch.wait();
      dom.signal(kFlagReduced, epoch);
    }

    for (int r = 0; r < t.size(); ++r) {
      auto [local, slot] = holder[r];
      waitPeer(ctx, local, slot == 0 ? kFlagStaged : kFlagReduced, epoch);
      std::memcpy(out + r * blockBytes + offset * es, dom.window(local) + slot * bytes, bytes);
      if (local != me) ctx.movedUp(bytes);
    }
    endRound(ctx, epoch);
  }
  ctx.stats.scaleOutBoundBytes += static_cast<std::uint64_t>(t.numDomains() - 1) * blockBytes;
}

}  // namespace tiercc
