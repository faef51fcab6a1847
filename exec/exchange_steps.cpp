// Exchange steps over the transport: pairwise all-to-all(v), the dissemination barrier, and
// send/recv. Pairwise (pattern/pairwise.hpp): p rounds of symmetric pairs, one block each way
// per round. Blocks travel in pieces of at most one receive scratch. Out of place they go
// straight from the input to the output. In place, a piece arrives in the receive scratch and
// is copied over the outgoing one once that has left: each round reads and writes the same
// block, so nothing is overwritten early. The messages are the same either way, so ranks may
// differ in placement.
#include "core/copy.hpp"
#include "core/errors.hpp"
#include "exec/steps.hpp"
#include "plan/pattern/bruck.hpp"
#include "plan/pattern/pairwise.hpp"

namespace tiercc::steps {
namespace {

// Pieces of a block: at most pieceBytes each, and at least one (empty blocks travel too, so a
// mismatch in sizes between the two sides is reported rather than left waiting).
std::size_t piecesOf(std::size_t bytes, std::size_t pieceBytes) {
  return std::max<std::size_t>(1, (bytes + pieceBytes - 1) / pieceBytes);
}

void exchange(Call& c, const Fragment& f, int round, int peer, const std::byte* sendBuf, std::size_t sendBytes,
              std::byte* recvBuf, std::size_t recvBytes, bool inPlace) {
  const std::size_t pieceBytes = c.ctx.scratch.receive.size() / c.es * c.es;
  const std::uint64_t base = static_cast<std::uint64_t>(round) << 16;
  c.ctx.renewDeadline();
  TransferBatch& batch = c.newBatch(f);
  if (!inPlace) {
    for (std::size_t i = 0, n = piecesOf(sendBytes, pieceBytes); i < n; ++i) {
      const std::size_t at = std::min(i * pieceBytes, sendBytes);
      batch.send(peer, c.tag(f, base + i), sendBuf + at, std::min(pieceBytes, sendBytes - at));
    }
    for (std::size_t i = 0, n = piecesOf(recvBytes, pieceBytes); i < n; ++i) {
      const std::size_t at = std::min(i * pieceBytes, recvBytes);
      batch.recv(peer, c.tag(f, base + i), recvBuf + at, std::min(pieceBytes, recvBytes - at));
    }
    batch.wait();
    return;
  }
  std::byte* rx = c.ctx.scratch.receive.data();
  for (std::size_t i = 0, n = piecesOf(sendBytes, pieceBytes); i < n; ++i) {
    const std::size_t at = std::min(i * pieceBytes, sendBytes), len = std::min(pieceBytes, sendBytes - at);
    c.ctx.renewDeadline();
    batch.send(peer, c.tag(f, base + i), recvBuf + at, len);
    batch.recv(peer, c.tag(f, base + i), rx, len);
    batch.wait();
    if (len) copyBytes(recvBuf + at, rx, len);
  }
}

}  // namespace

void pairwise(Call& c, const Step&, Fragment& f) {
  const CallArgs& a = c.args;
  const int p = c.ctx.topo.size(), me = c.ctx.topo.rank();
  // All-to-allv is never in place (the API rejects overlapping buffers), and sendCounts[me] ==
  // recvCounts[me] (checked by the API before the call, so that a bad layout changes nothing).
  const bool v = a.coll == Collective::AllToAllv, inPlace = !v && c.send() == c.recv();
  const std::size_t es = c.es, block = c.plan.count * es;
  auto at = [&](const std::size_t* displs, int r) { return v ? displs[r] * es : r * block; };
  auto len = [&](const std::size_t* counts, int r) { return v ? counts[r] * es : block; };
  if (!inPlace && len(a.sendCounts, me))
    copyBytes(c.recv() + at(a.recvDispls, me), c.send() + at(a.sendDispls, me), len(a.sendCounts, me));
  for (int s = 0; s < pattern::pairwiseSteps(p); ++s) {
    const int peer = pattern::pairwisePeer(p, me, s);
    if (peer != me)
      exchange(c, f, s, peer, c.send() + at(a.sendDispls, peer), len(a.sendCounts, peer),
               c.recv() + at(a.recvDispls, peer), len(a.recvCounts, peer), inPlace);
  }
}

void dissemination(Call& c, const Step&, Fragment& f) {
  const int p = c.ctx.topo.size(), me = c.ctx.topo.rank();
  std::byte* none = c.ctx.scratch.receive.data();  // zero-length messages still need an address
  for (int k = 0; k < pattern::bruckSteps(p); ++k) {
    c.ctx.renewDeadline();
    TransferBatch& batch = c.newBatch(f);
    batch.send(pattern::disseminationSendTo(p, me, k), c.tag(f, k), none, 0);
    batch.recv(pattern::disseminationRecvFrom(p, me, k), c.tag(f, k), none, 0);
    batch.wait();
  }
}

// Messages between a pair are matched in order (MPI's non-overtaking rule) through a per-pair
// sequence number in the tag (the call's sequence number); the top bit keeps them apart from
// collectives' messages.
void pointToPoint(Call& c, const Step& st, Fragment& f) {
  if (!c.ctx.transport) fail(ErrorCode::Internal, c.ctx.what, ": no transport to reach rank ", c.args.peer);
  constexpr std::uint64_t kPointToPointTag = 1ull << 63;
  const bool isSend = st.kind == StepKind::Send;
  const std::size_t bytes = c.plan.count * c.es;
  TransferBatch& batch = c.newBatch(f);
  if (isSend)
    batch.send(c.args.peer, kPointToPointTag | c.ctx.seq, c.send(), bytes);
  else
    batch.recv(c.args.peer, kPointToPointTag | c.ctx.seq, c.recv(), bytes);
  batch.wait();
}

}  // namespace tiercc::steps
