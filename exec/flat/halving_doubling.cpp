// Rabenseifner's allreduce: recursive-halving reduce-scatter, then recursive-doubling allgather,
// over the largest power of two p2 <= p; the other p - p2 ranks fold into a partner first and
// get the result back last (pattern/halving_doubling.hpp). Each butterfly rank sends about
// 2 (p2-1)/p2 of the vector in 2 log2 p2 steps: bandwidth-optimal like the ring, with
// logarithmic latency, for mid-size messages.
//
// The vector is processed in fragments; a halving step receives at most half a fragment into
// the receive scratch, so a fragment holds about two scratches' worth (the fold, which
// receives a whole fragment, comes in two pieces). Each block is reduced by one rank per
// halving step, the lower virtual rank's data first, and its final value is computed once
// (by its owner) and then copied: every rank ends with the same bits.
#include "exec/bound.hpp"
#include "exec/flat/flat_detail.hpp"
#include "plan/pattern/pattern.hpp"

namespace tiercc {

void halvingDoublingAllreduce(CollContext& ctx, const Group& g, const void* send, void* recv, std::size_t count,
                              DataType dt, ReduceOp op) {
  const int p = g.size(), me = g.me;
  const std::size_t es = dataTypeSize(dt);
  const auto* in = static_cast<const std::byte*>(send);
  auto* out = static_cast<std::byte*>(recv);
  const pattern::Butterfly bf(p);
  const int p2 = bf.participants(), L = bf.steps(), v = bf.virtualRank(me);
  // A folding rank keeps its input where it is and receives the result into the output.
  if (!bf.folds(me)) flat::copyUnlessSame(out, in, count * es);
  if (p > 1) {
    flat::requireTransport(ctx, g);
    std::byte* rx = ctx.scratch.receive.data();
    const std::size_t piece = flat::fragmentElements(ctx, 1, es);
    // The larger half of a fragment of n elements in p2 blocks is at most n/2 + p2/4 elements.
    const std::size_t halfSlack = static_cast<std::size_t>(p2) / 2;
    const std::size_t perFragment = 2 * piece > piece + halfSlack ? 2 * piece - halfSlack : piece;
    const int steps = 2 + 2 * L + 1;  // fold (two pieces), halving, doubling, unfold
    std::uint64_t fragment = 0;
    for (std::size_t offset = 0; offset < count; offset += perFragment, ++fragment) {
      const std::size_t n = std::min(perFragment, count - offset);
      std::byte* base = out + offset * es;
      flat::foldIn(ctx, g, bf, in + offset * es, base, n, piece, dt, op, fragment, 0, steps);
      if (v >= 0) {
        // Blocks [r.begin, r.end) of the fragment: (byte offset, bytes).
        auto bytesOf = [&](pattern::BlockRange r) {
          const std::size_t b = pattern::blockBegin(n, p2, r.begin), e = pattern::blockBegin(n, p2, r.end);
          return std::pair<std::size_t, std::size_t>{b * es, (e - b) * es};
        };
        for (int s = 0; s < L; ++s) {
          flat::renewDeadline(ctx);
          const int pv = bf.peer(v, s);
          auto [sendAt, sendLen] = bytesOf(bf.sent(v, s));
          auto [keepAt, keepLen] = bytesOf(bf.kept(v, s));
          const std::uint64_t tag = flat::tag(ctx, fragment, 2 + s, steps);
          TransferBatch batch(ctx);
          if (sendLen) batch.send(g.ranks[bf.realRank(pv)], tag, base + sendAt, sendLen);
          if (keepLen) batch.recv(g.ranks[bf.realRank(pv)], tag, rx, keepLen);
          batch.wait();
          std::byte* mine = base + keepAt;
          if (v < pv)
            reduce3(mine, mine, rx, keepLen / es, dt, op);
          else
            reduce3(mine, rx, mine, keepLen / es, dt, op);
        }
        if (op == ReduceOp::Avg) {
          const int owned = bf.ownedBlock(v);
          auto [at, len] = bytesOf({owned, owned + 1});
          finishAvg(base + at, len / es, dt, p);
        }
        for (int t = 0; t < L; ++t) {
          flat::renewDeadline(ctx);
          const int s = L - 1 - t, pv = bf.peer(v, s);
          auto [sendAt, sendLen] = bytesOf(bf.kept(v, s));
          auto [recvAt, recvLen] = bytesOf(bf.sent(v, s));
          const std::uint64_t tag = flat::tag(ctx, fragment, 2 + L + t, steps);
          TransferBatch batch(ctx);
          if (sendLen) batch.send(g.ranks[bf.realRank(pv)], tag, base + sendAt, sendLen);
          if (recvLen) batch.recv(g.ranks[bf.realRank(pv)], tag, base + recvAt, recvLen);
          batch.wait();
        }
      }
      flat::foldOut(ctx, g, bf, base, n * es, flat::tag(ctx, fragment, steps - 1, steps));
    }
  } else if (op == ReduceOp::Avg) {
    finishAvg(out, count, dt, 1);
  }
  if (flat::isWholeCollective(ctx, g)) ctx.stats.scaleOutBoundBytes += bound::allreduce(ctx.topo, count * es);
}

}  // namespace tiercc
