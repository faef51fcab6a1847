// Ring algorithms over a group, every message to the ring successor: reduce-scatter, allgather,
// and allreduce as the two in a row. Each rank sends (p-1)/p of the data per phase whatever p
// is (no power-of-two assumption), in p - 1 steps per fragment.
//
// Reduce-scatter works in fragments that fit the scratch (a partial being passed on, and one
// arriving): every fragment runs the whole ring. Each block is reduced by a fixed chain of
// ranks, op(partial so far, own input), and finishes at its owner; in an allreduce the owner's
// result is then copied around, so every rank ends with the same bits. Allgather receives
// straight into the output, one whole block per step, so it needs no scratch and no fragments.
#include "plan/pattern/ring.hpp"

#include "exec/bound.hpp"
#include "exec/flat/flat_detail.hpp"
#include "core/reduce.hpp"

namespace tiercc {
namespace {

using pattern::ringNext;
using pattern::ringPrev;

// Ring allgather of the blocks [begin(b), begin(b + 1)) of `buf`, block b starting at rank b.
// `steps` and `firstStep` place its tags after those of a reduce-scatter in the same fragment.
template <class Block>
void allgatherBlocks(CollContext& ctx, const Group& g, std::byte* buf, Block block, std::uint64_t fragment,
                     int firstStep, int steps) {
  const int p = g.size(), me = g.me;
  for (int s = 0; s < p - 1; ++s) {
    flat::renewDeadline(ctx);
    auto [sendAt, sendLen] = block(pattern::ringAllgatherSendBlock(p, me, s));
    auto [recvAt, recvLen] = block(pattern::ringAllgatherRecvBlock(p, me, s));
    const std::uint64_t tag = flat::tag(ctx, fragment, firstStep + s, steps);
    TransferBatch batch(ctx);
    if (sendLen) batch.send(g.ranks[ringNext(p, me)], tag, buf + sendAt, sendLen);
    if (recvLen) batch.recv(g.ranks[ringPrev(p, me)], tag, buf + recvAt, recvLen);
    batch.wait();
  }
}

}  // namespace

void ringAllreduce(CollContext& ctx, const Group& g, const void* send, void* recv, std::size_t count, DataType dt,
                   ReduceOp op) {
  const int p = g.size(), me = g.me;
  const std::size_t es = dataTypeSize(dt);
  auto* out = static_cast<std::byte*>(recv);
  flat::copyUnlessSame(out, send, count * es);  // the ring works in the output
  if (p > 1) {
    flat::requireTransport(ctx, g);
    std::byte* rx = ctx.scratch.receive.data();
    // Blocks are 1/p of a fragment; each must fit the receive scratch.
    const std::size_t perFragment = flat::fragmentElements(ctx, 1, es) * static_cast<std::size_t>(p);
    const int steps = 2 * (p - 1);
    std::uint64_t fragment = 0;
    for (std::size_t offset = 0; offset < count; offset += perFragment, ++fragment) {
      const std::size_t n = std::min(perFragment, count - offset);
      std::byte* base = out + offset * es;
      // Block b of the fragment: (byte offset, bytes).
      auto block = [&](int b) {
        auto [begin, end] = partition(n, static_cast<std::size_t>(p), static_cast<std::size_t>(b));
        return std::pair<std::size_t, std::size_t>{begin * es, (end - begin) * es};
      };
      for (int s = 0; s < p - 1; ++s) {
        flat::renewDeadline(ctx);
        auto [sendAt, sendLen] = block(pattern::ringReduceScatterSendBlock(p, me, s));
        auto [recvAt, recvLen] = block(pattern::ringReduceScatterRecvBlock(p, me, s));
        const std::uint64_t tag = flat::tag(ctx, fragment, s, steps);
        TransferBatch batch(ctx);
        if (sendLen) batch.send(g.ranks[ringNext(p, me)], tag, base + sendAt, sendLen);
        if (recvLen) batch.recv(g.ranks[ringPrev(p, me)], tag, rx, recvLen);
        batch.wait();
        reduce3(base + recvAt, rx, base + recvAt, recvLen / es, dt, op);
      }
      if (op == ReduceOp::Avg) {
        auto [at, len] = block(me);
        finishAvg(base + at, len / es, dt, p);
      }
      allgatherBlocks(ctx, g, base, block, fragment, p - 1, steps);
    }
  } else if (op == ReduceOp::Avg) {
    finishAvg(out, count, dt, 1);
  }
  if (flat::isWholeCollective(ctx, g)) ctx.stats.scaleOutBoundBytes += bound::allreduce(ctx.topo, count * es);
}

void ringReduceScatter(CollContext& ctx, const Group& g, const void* send, void* recv, std::size_t blockCount,
                       DataType dt, ReduceOp op) {
  const int p = g.size(), me = g.me;
  const std::size_t es = dataTypeSize(dt), blockBytes = blockCount * es;
  const auto* in = static_cast<const std::byte*>(send);
  auto* out = static_cast<std::byte*>(recv);
  if (p == 1) {
    flat::copyUnlessSame(out, in, blockBytes);
  } else {
    flat::requireTransport(ctx, g);
    std::byte* acc = ctx.scratch.accumulate.data();  // the partial this rank passes on next
    std::byte* rx = ctx.scratch.receive.data();
    const std::size_t perFragment = flat::fragmentElements(ctx, 1, es, true);
    // In place (recv == send + me x block) works: this rank's own block is read only at the
    // last step, as the final reduction writes it.
    for (std::size_t offset = 0, fragment = 0; offset < blockCount; offset += perFragment, ++fragment) {
      const std::size_t n = std::min(perFragment, blockCount - offset), bytes = n * es;
      auto input = [&](int b) { return in + (static_cast<std::size_t>(b) * blockCount + offset) * es; };
      for (int s = 0; s < p - 1; ++s) {
        flat::renewDeadline(ctx);
        const std::uint64_t tag = flat::tag(ctx, fragment, s, p - 1);
        TransferBatch batch(ctx);
        batch.send(g.ranks[ringNext(p, me)], tag, s == 0 ? input(pattern::ringReduceScatterSendBlock(p, me, s)) : acc,
                   bytes);
        batch.recv(g.ranks[ringPrev(p, me)], tag, rx, bytes);
        batch.wait();
        std::byte* dst = s == p - 2 ? out + offset * es : acc;
        reduce3(dst, rx, input(pattern::ringReduceScatterRecvBlock(p, me, s)), n, dt, op);
      }
      if (op == ReduceOp::Avg) finishAvg(out + offset * es, n, dt, p);
    }
  }
  if (flat::isWholeCollective(ctx, g)) ctx.stats.scaleOutBoundBytes += bound::reduceScatter(ctx.topo, blockBytes);
}

void ringAllgather(CollContext& ctx, const Group& g, const void* send, void* recv, std::size_t blockCount,
                   DataType dt) {
  const int p = g.size(), me = g.me;
  const std::size_t blockBytes = blockCount * dataTypeSize(dt);
  auto* out = static_cast<std::byte*>(recv);
  // In place, send == recv + me x block: already where it belongs.
  flat::copyUnlessSame(out + static_cast<std::size_t>(me) * blockBytes, send, blockBytes);
  if (p > 1 && blockBytes) {
    flat::requireTransport(ctx, g);
    auto block = [&](int b) {
      return std::pair<std::size_t, std::size_t>{static_cast<std::size_t>(b) * blockBytes, blockBytes};
    };
    allgatherBlocks(ctx, g, out, block, 0, 0, p - 1);
  }
  if (flat::isWholeCollective(ctx, g)) ctx.stats.scaleOutBoundBytes += bound::allgather(ctx.topo, blockBytes);
}

}  // namespace tiercc
