// Point-to-point send and receive over the scale-out transport, which connects every pair of
// ranks. Messages between a pair are matched in order (MPI's non-overtaking rule) through a
// per-pair sequence number in the tag; the top bit keeps p2p tags apart from collectives'.
#include "collectives/context.hpp"

namespace tiercc {
namespace {

constexpr std::uint64_t kP2pTagBit = 1ull << 63;

void transfer(CollContext& ctx, bool isSend, std::byte* buf, std::size_t bytes, int peer, std::uint64_t pairSeq) {
  if (!ctx.transport) fail(ErrorCode::Internal, ctx.what, ": no transport to reach rank ", peer);
  TransferOp op;
  op.peer = peer;
  op.isSend = isSend;
  op.tag = kP2pTagBit | pairSeq;
  op.buf = buf;
  op.len = bytes;
  isSend ? ctx.transport->isend(op) : ctx.transport->irecv(op);
  ctx.transport->wait({&op}, ctx.deadline, ctx.what);
  if (!isSend) return;
  if (ctx.topo.domainOf(peer) == ctx.topo.domain()) ctx.stats.scaleUpBytes += bytes;
  else ctx.stats.scaleOutBytes += bytes;
}

}  // namespace

void sendPointToPoint(CollContext& ctx, const void* buf, std::size_t bytes, int peer, std::uint64_t pairSeq) {
  transfer(ctx, true, static_cast<std::byte*>(const_cast<void*>(buf)), bytes, peer, pairSeq);
}

void recvPointToPoint(CollContext& ctx, void* buf, std::size_t bytes, int peer, std::uint64_t pairSeq) {
  transfer(ctx, false, static_cast<std::byte*>(buf), bytes, peer, pairSeq);
}

}  // namespace tiercc
