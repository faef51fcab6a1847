// The direct round (see direct.hpp).
#include "exec/direct.hpp"

#include <cstring>

#include "core/copy.hpp"
#include "core/errors.hpp"
#include "core/log.hpp"
#include "exec/round.hpp"

namespace tiercc {

static_assert(sizeof(BufferDescriptor) <= Domain::kMailboxBytes);

void DirectRound::agree(ExecContext& ctx, const CallShape& shape, const void* send, std::size_t sendBytes,
                        const void* recv, std::size_t recvBytes) {
  ctx_ = &ctx;
  path_ = Path::Staged;
  Domain& dom = ctx.domain;
  epoch_ = beginRound(ctx);  // every peer is done with our mailbox and buffers of the last round
  BufferDescriptor d;
  d.epoch = epoch_;
  d.shape = shape;
  if (const SymmetricMemory* heap = dom.symmetric()) {
    if (auto ref = send ? heap->find(send, sendBytes) : std::nullopt) {
      d.flags |= BufferDescriptor::kSendSymmetric;
      d.send = *ref;
    }
    if (auto ref = recv ? heap->find(recv, recvBytes) : std::nullopt) {
      d.flags |= BufferDescriptor::kRecvSymmetric;
      d.recv = *ref;
    }
  }
  if (dom.crossMemoryAttach()) d.flags |= BufferDescriptor::kCrossMemory;
  if (send && send == recv) d.flags |= BufferDescriptor::kInPlace;
  d.sendAddr = reinterpret_cast<std::uintptr_t>(send);
  d.recvAddr = reinterpret_cast<std::uintptr_t>(recv);
  std::memcpy(dom.mailbox(dom.localRank()), &d, sizeof(d));
  dom.signal(kFlagStaged, epoch_);
  descriptors_.resize(static_cast<std::size_t>(dom.size()));
  for (int p = 0; p < dom.size(); ++p) {
    waitPeer(ctx, p, kFlagStaged, epoch_, false);  // the descriptors below say it, alike on every rank
    std::memcpy(&descriptors_[static_cast<std::size_t>(p)], dom.mailbox(p), sizeof(BufferDescriptor));
  }
  // Every rank compares every descriptor with local rank 0's, so every rank fails with the same
  // message, naming the same rank. A descriptor of an older epoch means its rank raised Staged
  // for a staged round instead: it planned no direct path, which only another size (or another
  // collective) can make it do.
  const int domain = ctx.topo.domain();
  const BufferDescriptor& first = of(0);
  for (int p = 0; p < dom.size(); ++p) {
    const BufferDescriptor& other = of(p);
    const int rank = ctx.topo.rankAt(domain, p);
    if (other.epoch != epoch_)
      throw AgreedError(ErrorCode::InvalidArgument,
                        concat(ctx.what, ": rank ", rank,
                               " did not take part in this call's direct round: it runs another collective or another "
                               "size (every rank must pass the same count, datatype, op and root)"));
    if (!(other.shape == first.shape))
      throw AgreedError(
          ErrorCode::InvalidArgument,
          concat(ctx.what, ": rank ", rank, " passed ", describe(other.shape), " but rank ", ctx.topo.rankAt(domain, 0),
                 " passed ", describe(first.shape), ": every rank must pass the same count, datatype, op and root"));
  }
}

bool DirectRound::possible(Path path, std::uint32_t needs, int rootLocal) const {
  using D = BufferDescriptor;
  for (int p = 0; p < ctx_->domain.size(); ++p) {
    const BufferDescriptor& d = of(p);
    if ((needs & kNeedOutOfPlace) && d.has(D::kInPlace)) return false;
    if (path == Path::CrossMemory && !d.has(D::kCrossMemory)) return false;
    if (path != Path::ZeroCopy) continue;
    const bool root = p == rootLocal;
    if (((needs & kNeedSend) || ((needs & kNeedRootSend) && root)) && !d.has(D::kSendSymmetric)) return false;
    if (((needs & kNeedRecv) || ((needs & kNeedRootRecv) && root)) && !d.has(D::kRecvSymmetric)) return false;
  }
  return true;
}

std::uint32_t DirectRound::take(Path path, std::uint32_t rounds) {
  path_ = path;
  TIERCC_LOG(Trace, Coll) << ctx_->what << ": "
                          << (path == Path::ZeroCopy ? "zero copy (symmetric buffers)"
                                                     : "single copy (cross-memory attach)");
  const std::uint32_t first = epoch_;
  epoch_ = first + std::max<std::uint32_t>(rounds, 1) - 1;
  ctx_->epoch = epoch_;
  return first;
}

void DirectRound::abandon() {
  TIERCC_LOG(Trace, Coll) << ctx_->what << ": staged (no direct path every rank can take)";
  endRound(*ctx_, epoch_);
}

void DirectRound::close() {
  endRound(*ctx_, epoch_);
  ctx_->renewDeadline();
  for (int p = 0; p < ctx_->domain.size(); ++p) waitPeer(*ctx_, p, kFlagReleased, epoch_);
}

const std::byte* DirectRound::peerSend(int peer) const {
  return ctx_->domain.symmetric()->peerAddress(peer, of(peer).send);
}

std::byte* DirectRound::peerRecv(int peer) const { return ctx_->domain.symmetric()->peerAddress(peer, of(peer).recv); }

void DirectRound::read(int peer, bool fromSend, std::size_t offset, void* dst, std::size_t len) {
  if (len == 0) return;
  if (path_ == Path::ZeroCopy) {
    copyBytes(dst, (fromSend ? peerSend(peer) : peerRecv(peer)) + offset, len);
  } else {
    const BufferDescriptor& d = of(peer);
    ctx_->domain.readPeer(peer, (fromSend ? d.sendAddr : d.recvAddr) + offset, dst, len);
  }
  ctx_->movedUp(len);
}

}  // namespace tiercc
