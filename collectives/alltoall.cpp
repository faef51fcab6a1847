// Hierarchical all-to-all for mixture-of-experts traffic. Per round, a chunk of every block:
// each rank stages its N outgoing blocks in its window. Blocks for ranks of the same domain are
// copied straight from the source's window. Blocks for another domain travel on the rail of the
// destination's local rank l' (rail l' % rails): that rail's member in the source domain packs
// every block of its domain bound for those ranks into ONE message per destination domain, and
// its peer there unpacks into its window, from which the destinations copy. So the slow tier
// carries each cross-domain byte once, in few large messages, on every rail at once.
#include <cstring>

#include "collectives/direct.hpp"
#include "collectives/round.hpp"

namespace tiercc {
namespace {

// Destinations in `domain` served by `rail`: local ranks rail, rail + rails, ...
int railDests(const Topology& t, int domain, int rail, int rails) {
  int k = t.domainSize(domain);
  return rail < k ? (k - rail + rails - 1) / rails : 0;
}

// Blocks, in units of one chunk, that rail `rail` of `domain` receives from other domains;
// `before` (if given) gets the offset of each source domain's message.
std::size_t arrivalBlocks(const Topology& t, int domain, int rail, int rails, std::vector<std::size_t>* before) {
  std::size_t total = 0;
  if (before) before->assign(t.numDomains(), 0);
  for (int d = 0; d < t.numDomains(); ++d) {
    if (d == domain) continue;
    if (before) (*before)[d] = total;
    total += static_cast<std::size_t>(t.domainSize(d)) * railDests(t, domain, rail, rails);
  }
  return total;
}

}  // namespace

void alltoallHierarchical(CollContext& ctx, const void* send, void* recv, std::size_t blockCount, DataType dt) {
  if (directAlltoall(ctx, send, recv, blockCount, dt)) return;
  const Topology& t = ctx.topo;
  Domain& dom = ctx.domain;
  const std::size_t es = dataTypeSize(dt);
  const int n = t.size(), k = dom.size(), me = dom.localRank(), rails = t.minDomainSize();
  const int myDomain = t.domain(), numDomains = t.numDomains();

  std::size_t maxArrivals = 0, maxPacked = 0;
  for (int d = 0; d < numDomains; ++d)
    for (int j = 0; j < rails; ++j) {
      maxArrivals = std::max(maxArrivals, arrivalBlocks(t, d, j, rails, nullptr));
      std::size_t packed = 0;
      for (int d2 = 0; d2 < numDomains; ++d2)
        if (d2 != d) packed += static_cast<std::size_t>(t.domainSize(d)) * railDests(t, d2, j, rails);
      maxPacked = std::max(maxPacked, packed);
    }
  std::size_t perRound = elementsPerRound(dom.windowBytes(), n + maxArrivals, es);
  if (maxPacked) perRound = std::min(perRound, elementsPerRound(ctx.scratch.accumulate.size(), maxPacked, es));
  const auto* in = static_cast<const std::byte*>(send);
  auto* out = static_cast<std::byte*>(recv);
  std::vector<std::size_t> myArrivalBase, holderBase;  // as rail member; as destination
  if (me < rails) arrivalBlocks(t, myDomain, me, rails, &myArrivalBase);
  arrivalBlocks(t, myDomain, me % rails, rails, &holderBase);

  std::uint64_t chunk = 0;
  for (std::size_t offset = 0; offset < blockCount; offset += perRound, ++chunk) {
    const std::size_t len = std::min(perRound, blockCount - offset), bytes = len * es;
    const std::uint32_t epoch = beginRound(ctx);
    for (int r = 0; r < n; ++r) std::memcpy(dom.window(me) + r * bytes, in + (r * blockCount + offset) * es, bytes);
    dom.signal(kFlagStaged, epoch);
    std::byte* arrivals = dom.window(me) + n * bytes;

    if (numDomains > 1 && me < rails) {
      for (int p = 0; p < k; ++p) waitPeer(ctx, p, kFlagStaged, epoch);
      TransferBatch batch(ctx);
      std::byte* packed = ctx.scratch.accumulate.data();
      for (int d = 0; d < numDomains; ++d) {
        if (d == myDomain) continue;
        std::byte* message = packed;
        for (int l2 = me; l2 < t.domainSize(d); l2 += rails)
          for (int l = 0; l < k; ++l) {
            std::memcpy(packed, dom.window(l) + t.rankAt(d, l2) * bytes, bytes);
            packed += bytes;
            if (l != me) ctx.movedUp(bytes);
          }
        if (packed > message) batch.send(t.rankAt(d, me), roundTag(ctx, chunk, 0), message, packed - message);
        std::size_t incoming = static_cast<std::size_t>(t.domainSize(d)) * railDests(t, myDomain, me, rails) * bytes;
        if (incoming) batch.recv(t.rankAt(d, me), roundTag(ctx, chunk, 0), arrivals + myArrivalBase[d] * bytes, incoming);
      }
      batch.wait();
      dom.signal(kFlagReduced, epoch);
    }

    // Copy every block addressed to this rank into place.
    for (int s = 0; s < n; ++s) {
      const int sd = t.domainOf(s), sl = t.localRankOf(s);
      const std::byte* src;
      int holder;
      if (sd == myDomain) {
        holder = sl;
        waitPeer(ctx, holder, kFlagStaged, epoch);
        src = dom.window(holder) + t.rank() * bytes;
      } else {
        holder = me % rails;
        waitPeer(ctx, holder, kFlagReduced, epoch);
        std::size_t block = holderBase[sd] + static_cast<std::size_t>(me / rails) * t.domainSize(sd) + sl;
        src = dom.window(holder) + n * bytes + block * bytes;
      }
      std::memcpy(out + (s * blockCount + offset) * es, src, bytes);
      if (holder != me) ctx.movedUp(bytes);
    }
    endRound(ctx, epoch);
  }
  ctx.stats.scaleOutBoundBytes += static_cast<std::uint64_t>(n - k) * blockCount * es;
}

}  // namespace tiercc
