// Pairwise-exchange all-to-all and all-to-allv over a group (pattern/pairwise.hpp): p steps,
// in each of which every rank swaps one block with one peer (symmetric pairs, any p), so a
// rank has one message in flight per direction and every byte crosses once: the bandwidth
// choice for large blocks, and the only choice for ragged (v) sizes.
//
// Blocks travel in pieces of at most one scratch. Out of place they go straight from the input
// to the output. In place, a piece arrives in the receive scratch and is copied over the
// outgoing one once that has left: each step reads and writes the same block, so nothing is
// overwritten early.
#include "plan/pattern/pairwise.hpp"

#include "exec/bound.hpp"
#include "exec/flat/flat_detail.hpp"

namespace tiercc {
namespace {

// Pieces of a block: at most pieceBytes each, and at least one (empty blocks travel too, so a
// mismatch in sizes between the two sides is reported rather than left waiting).
std::size_t piecesOf(std::size_t bytes, std::size_t pieceBytes) {
  return std::max<std::size_t>(1, (bytes + pieceBytes - 1) / pieceBytes);
}

// One step: sendBytes to `peer` and recvBytes from it, in pieces. Out of place, all pieces are
// posted at once, straight into the output. In place (staged), a piece arrives in the receive
// scratch and is copied over the outgoing one once that has left; both sides then have equal
// sizes. The messages are the same either way, so ranks may differ in placement.
void exchange(CollContext& ctx, int peer, const std::byte* sendBuf, std::size_t sendBytes, std::byte* recvBuf,
              std::size_t recvBytes, std::size_t pieceBytes, bool staged, int step, int steps) {
  flat::renewDeadline(ctx);
  TransferBatch batch(ctx);
  if (!staged) {
    for (std::size_t i = 0, n = piecesOf(sendBytes, pieceBytes); i < n; ++i) {
      const std::size_t at = std::min(i * pieceBytes, sendBytes);
      batch.send(peer, flat::tag(ctx, i, step, steps), sendBuf + at, std::min(pieceBytes, sendBytes - at));
    }
    for (std::size_t i = 0, n = piecesOf(recvBytes, pieceBytes); i < n; ++i) {
      const std::size_t at = std::min(i * pieceBytes, recvBytes);
      batch.recv(peer, flat::tag(ctx, i, step, steps), recvBuf + at, std::min(pieceBytes, recvBytes - at));
    }
    batch.wait();
    return;
  }
  std::byte* rx = ctx.scratch.receive.data();
  for (std::size_t i = 0, n = piecesOf(sendBytes, pieceBytes); i < n; ++i) {
    const std::size_t at = std::min(i * pieceBytes, sendBytes), len = std::min(pieceBytes, sendBytes - at);
    flat::renewDeadline(ctx);
    batch.send(peer, flat::tag(ctx, i, step, steps), recvBuf + at, len);
    batch.recv(peer, flat::tag(ctx, i, step, steps), rx, len);
    batch.wait();
    if (len) std::memcpy(recvBuf + at, rx, len);
  }
}

}  // namespace

void pairwiseAlltoall(CollContext& ctx, const Group& g, const void* send, void* recv, std::size_t blockCount,
                      DataType dt) {
  const int p = g.size(), me = g.me;
  const std::size_t es = dataTypeSize(dt), blockBytes = blockCount * es;
  const auto* in = static_cast<const std::byte*>(send);
  auto* out = static_cast<std::byte*>(recv);
  const bool inPlace = in == out;
  auto offsetOf = [&](int block) { return static_cast<std::size_t>(block) * blockBytes; };
  flat::copyUnlessSame(out + offsetOf(me), in + offsetOf(me), blockBytes);
  if (p > 1 && blockBytes > 0) {
    flat::requireTransport(ctx, g);
    const int steps = pattern::pairwiseSteps(p);
    const std::size_t pieceBytes = flat::fragmentElements(ctx, 1, es) * es;
    for (int s = 0; s < steps; ++s) {
      const int peer = pattern::pairwisePeer(p, me, s);
      if (peer == me) continue;
      exchange(ctx, g.ranks[peer], in + offsetOf(peer), blockBytes, out + offsetOf(peer), blockBytes, pieceBytes,
               inPlace, s, steps);
    }
  }
  if (flat::isWholeCollective(ctx, g)) ctx.stats.scaleOutBoundBytes += bound::alltoall(ctx.topo, blockBytes);
}

void pairwiseAlltoallv(CollContext& ctx, const Group& g, const void* send, const std::size_t* sendCounts,
                       const std::size_t* sendDispls, void* recv, const std::size_t* recvCounts,
                       const std::size_t* recvDispls, DataType dt) {
  const int p = g.size(), me = g.me;
  const std::size_t es = dataTypeSize(dt);
  const auto* in = static_cast<const std::byte*>(send);
  auto* out = static_cast<std::byte*>(recv);
  // Not in place (the API rejects overlapping buffers), and sendCounts[me] == recvCounts[me]
  // (checked by the API before the call, so that a bad layout changes nothing).
  if (sendCounts[me]) std::memcpy(out + recvDispls[me] * es, in + sendDispls[me] * es, sendCounts[me] * es);
  if (p > 1) {
    flat::requireTransport(ctx, g);
    const int steps = pattern::pairwiseSteps(p);
    const std::size_t pieceBytes = flat::fragmentElements(ctx, 1, es) * es;
    for (int s = 0; s < steps; ++s) {
      const int peer = pattern::pairwisePeer(p, me, s);
      if (peer == me) continue;
      exchange(ctx, g.ranks[peer], in + sendDispls[peer] * es, sendCounts[peer] * es, out + recvDispls[peer] * es,
               recvCounts[peer] * es, pieceBytes, false, s, steps);
    }
  }
  // The bound (the bytes this rank sends to other domains) is recorded by the executor, which
  // has the counts of the whole communicator (exec/executor.cpp).
}

}  // namespace tiercc
