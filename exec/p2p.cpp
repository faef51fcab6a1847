// Point-to-point send and receive over the scale-out transport, which connects every pair of
// ranks. Messages between a pair are matched in order (MPI's non-overtaking rule) through a
// per-pair sequence number in the tag; the top bit keeps p2p tags apart from collectives'.
#include "exec/context.hpp"

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
  const Clock::time_point posted = Clock::now();
  isSend ? ctx.transport->isend(op) : ctx.transport->irecv(op);
  ctx.transport->wait({&op}, ctx.deadline, ctx.what);
  if (!isSend) return;
  // The sender pays the link model, as in TransferBatch::wait; a send inside the domain travels
  // over the transport here but is scale-up traffic, so it is counted and paced as such.
  const bool sameDomain = ctx.topo.domainOf(peer) == ctx.topo.domain();
  (sameDomain ? ctx.stats.scaleUpBytes : ctx.stats.scaleOutBytes) += bytes;
  LinkModel* link = sameDomain ? ctx.scaleUpLink : ctx.scaleOutLink;
  if (link) link->charge(bytes, posted);
}

}  // namespace

void sendPointToPoint(CollContext& ctx, const void* buf, std::size_t bytes, int peer, std::uint64_t pairSeq) {
  transfer(ctx, true, static_cast<std::byte*>(const_cast<void*>(buf)), bytes, peer, pairSeq);
}

void recvPointToPoint(CollContext& ctx, void* buf, std::size_t bytes, int peer, std::uint64_t pairSeq) {
  transfer(ctx, false, static_cast<std::byte*>(buf), bytes, peer, pairSeq);
}

}  // namespace tiercc
