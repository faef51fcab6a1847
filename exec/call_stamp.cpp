// Call stamps (see call_stamp.hpp). A stamp is five 64-bit words: the sequence number, the shape
// packed in three, and a check word, the fingerprint of the other four. The writer stores them
// while peers may read (a peer already past our flag reads our next call's stamp): a reader
// that catches a stamp half rewritten sees a check that does not match and ignores it, with no
// lock and no ordering beyond the flag it waited for.
#include "exec/call_stamp.hpp"

#include <atomic>

#include "core/errors.hpp"
#include "plan/topology.hpp"
#include "scaleup-emu/domain.hpp"

namespace tiercc {

namespace {

constexpr int kWords = 5;
static_assert(kWords * sizeof(std::uint64_t) <= Domain::kCallStampBytes);

struct Stamp {
  std::uint64_t seq = 0;
  CallShape shape;
};

std::atomic<std::uint64_t>* words(Domain& dom, int peer) {
  // The mailbox is 64-byte aligned in every backend, and kMailboxBytes a multiple of 64.
  return reinterpret_cast<std::atomic<std::uint64_t>*>(dom.mailbox(peer) + Domain::kMailboxBytes);
}

std::uint64_t checkOf(std::uint64_t seq, std::uint64_t print) { return print ^ (seq * 0x9e3779b97f4a7c15ull); }

}  // namespace

void stampCall(ExecContext& ctx, const CallShape& shape) {
  ctx.shape = &shape;
  const std::uint64_t print = fingerprint(shape);  // once a call: the stamp's check and the tags'
  ctx.tagSalt = static_cast<std::uint32_t>(print & 0xffff) << 16;
  Domain& dom = ctx.domain;
  if (!dom.mailbox(dom.localRank())) return;
  std::atomic<std::uint64_t>* w = words(dom, dom.localRank());
  constexpr auto relaxed = std::memory_order_relaxed;
  w[0].store(ctx.seq, relaxed);
  w[1].store(shape.bytes, relaxed);
  w[2].store(
      static_cast<std::uint64_t>(static_cast<std::uint32_t>(shape.coll)) << 32 | static_cast<std::uint32_t>(shape.dt),
      relaxed);
  w[3].store(
      static_cast<std::uint64_t>(static_cast<std::uint32_t>(shape.op)) << 32 | static_cast<std::uint32_t>(shape.root),
      relaxed);
  w[4].store(checkOf(ctx.seq, print), relaxed);  // the next signal() publishes them (release)
}

void comparePeerCall(ExecContext& ctx, int peer) {
  Domain& dom = ctx.domain;
  if (!ctx.shape || peer == dom.localRank() || !dom.mailbox(peer)) return;
  const std::atomic<std::uint64_t>* w = words(dom, peer);
  constexpr auto relaxed = std::memory_order_relaxed;
  Stamp theirs;
  theirs.seq = w[0].load(relaxed);
  theirs.shape.bytes = w[1].load(relaxed);
  const std::uint64_t kind = w[2].load(relaxed), opRoot = w[3].load(relaxed);
  theirs.shape.coll = static_cast<std::int32_t>(kind >> 32);
  theirs.shape.dt = static_cast<std::int32_t>(kind & 0xffffffffu);
  theirs.shape.op = static_cast<std::int32_t>(opRoot >> 32);
  theirs.shape.root = static_cast<std::int32_t>(opRoot & 0xffffffffu);
  // The usual case, without hashing: this very call (a later one would carry a later number,
  // so even a half-rewritten stamp that reads like ours is ours).
  if (theirs.seq == ctx.seq && theirs.shape == *ctx.shape) return;
  if (w[4].load(relaxed) != checkOf(theirs.seq, fingerprint(theirs.shape)))
    return;  // never written, or being rewritten
  if (theirs.seq > ctx.seq) return;
  const int rank = ctx.topo.rankAt(ctx.topo.domain(), peer);
  if (theirs.seq == ctx.seq)
    fail(ErrorCode::InvalidArgument, ctx.what, ": ", ctx.topo.nameRank(rank), " called ", describe(theirs.shape),
         " but this rank called ", describe(*ctx.shape),
         ": every rank must call the same collectives in the same order, with the same count, datatype, op and root");
  fail(ErrorCode::InvalidArgument, ctx.what, ": ", ctx.topo.nameRank(rank), " is still in its call #", theirs.seq, " (",
       describe(theirs.shape), ") where this rank runs ", describe(*ctx.shape),
       ": the ranks' sequences of collectives differ (every rank must call the same collectives in the same order)");
}

}  // namespace tiercc
