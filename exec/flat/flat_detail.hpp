// What the flat algorithms share (internal to collectives/flat): message tags, fragment sizes,
// the per-fragment deadline, and when a call records the slow-tier bound.
#pragma once

#include <cstring>

#include "exec/flat/flat.hpp"
#include "plan/pattern/halving_doubling.hpp"
#include "exec/round.hpp"
#include "core/reduce.hpp"

namespace tiercc::flat {

/// Tag of message `index` of this collective (index = fragment x steps + step): its low 32 bits
/// as roundTag's chunk and phase. Messages between two ranks match in posting order, so the
/// tag only checks that both sides agree; past 2^32 messages it wraps, which is harmless.
inline std::uint64_t tag(const CollContext& ctx, std::uint64_t fragment, int step, int steps) {
  const std::uint64_t index =
      (fragment * static_cast<std::uint64_t>(steps) + static_cast<std::uint64_t>(step)) & 0xffffffffu;
  return roundTag(ctx, index >> 8, index & 0xff);
}

/// Elements per fragment when one step receives `slots` element-sized pieces into the
/// receive scratch (and, with `withAccumulate`, packs as many into the accumulate scratch).
inline std::size_t fragmentElements(const CollContext& ctx, std::size_t slots, std::size_t es,
                                    bool withAccumulate = false) {
  std::size_t bytes = ctx.scratch.receive.size();
  if (withAccumulate) bytes = std::min(bytes, ctx.scratch.accumulate.size());
  return elementsPerRound(bytes, slots, es);
}

/// Starts a step: a deadline per step, as beginRound gives each hierarchical round, so a long
/// collective that keeps moving never times out.
inline void renewDeadline(CollContext& ctx) {
  if (ctx.timeout.count() > 0) ctx.deadline = Deadline::after(ctx.timeout);
}

/// A group of more than one rank talks over the transport, which must exist.
inline void requireTransport(const CollContext& ctx, const Group& g) {
  if (g.size() > 1 && !ctx.transport)
    fail(ErrorCode::Internal, ctx.what, ": a flat algorithm over ", g.size(), " ranks needs a scale-out transport");
}

/// The bound is the collective's, not the algorithm's: a flat algorithm over the whole
/// communicator is the collective and records it; over a subgroup it is one step of a larger
/// plan, which records the bound of the whole.
inline bool isWholeCollective(const CollContext& ctx, const Group& g) { return g.size() == ctx.topo.size(); }

/// memcpy unless the two are the same buffer (in place).
inline void copyUnlessSame(void* dst, const void* src, std::size_t bytes) {
  if (dst != src && bytes) std::memcpy(dst, src, bytes);
}

// The butterflies' non-power-of-two folding (pattern/halving_doubling.hpp), shared by
// halving-doubling and recursive doubling. Tags: foldIn uses steps firstStep .. firstStep +
// ceil(n / piece) - 1, foldOut one step.

/// Before the butterfly: a folding rank sends its `n` input elements, in pieces of at most
/// `piece` elements (what the receive scratch holds), to its partner, which reduces them into
/// its working copy `base` as op(folded rank's, own). Other ranks do nothing.
inline void foldIn(CollContext& ctx, const Group& g, const pattern::Butterfly& bf, const std::byte* input,
                   std::byte* base, std::size_t n, std::size_t piece, DataType dt, ReduceOp op, std::uint64_t fragment,
                   int firstStep, int steps) {
  const int partner = bf.foldPartner(g.me);
  if (partner < 0) return;
  const std::size_t es = dataTypeSize(dt);
  std::byte* rx = ctx.scratch.receive.data();
  renewDeadline(ctx);
  TransferBatch batch(ctx);
  for (std::size_t at = 0, i = 0; at < n; at += piece, ++i) {
    const std::size_t len = std::min(piece, n - at);
    const std::uint64_t t = tag(ctx, fragment, firstStep + static_cast<int>(i), steps);
    if (bf.folds(g.me)) {
      batch.send(g.ranks[partner], t, input + at * es, len * es);
    } else {
      renewDeadline(ctx);
      batch.recv(g.ranks[partner], t, rx, len * es);
      batch.wait();
      reduce3(base + at * es, rx, base + at * es, len, dt, op);
    }
  }
  batch.wait();
}

/// After the butterfly: the partner returns the `bytes` of the result to the folded rank.
inline void foldOut(CollContext& ctx, const Group& g, const pattern::Butterfly& bf, std::byte* base, std::size_t bytes,
                    std::uint64_t tag) {
  const int partner = bf.foldPartner(g.me);
  if (partner < 0 || bytes == 0) return;
  renewDeadline(ctx);
  TransferBatch batch(ctx);
  if (bf.folds(g.me))
    batch.recv(g.ranks[partner], tag, base, bytes);
  else
    batch.send(g.ranks[partner], tag, base, bytes);
  batch.wait();
}

}  // namespace tiercc::flat
