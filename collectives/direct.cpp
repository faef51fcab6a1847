// The direct round (see direct.hpp): descriptors in the mailboxes, the agreed path, reads of
// peers' buffers and the closing barrier.
#include "collectives/direct.hpp"

#include <cstring>

#include "collectives/round.hpp"
#include "core/log.hpp"

namespace tiercc {
namespace {

// Below this size the staged algorithms win: a direct call adds a barrier at its end (a rank's
// buffers may be read until every peer is done), where staged calls release lazily. Measured
// on the 2-core host (docs/performance.md): the crossover is between 16 and 64 KiB.
constexpr std::size_t kDirectMinBytes = 32 * 1024;

static_assert(sizeof(BufferDescriptor) <= Domain::kMailboxBytes);

}  // namespace

bool directWorthTrying(CollContext& ctx, std::size_t bytes, std::size_t crossMemoryMinBytes) {
  Domain& dom = ctx.domain;
  if (ctx.topo.numDomains() != 1 || dom.size() < 2 || bytes < kDirectMinBytes) return false;
  const SymmetricMemory* heap = dom.symmetric();
  return (heap && heap->liveAllocations() > 0) || (bytes >= crossMemoryMinBytes && dom.crossMemoryAttach());
}

DirectCall::DirectCall(CollContext& ctx, const void* send, std::size_t sendBytes, const void* recv,
                       std::size_t recvBytes)
    : ctx_(ctx) {
  Domain& dom = ctx.domain;
  epoch_ = beginRound(ctx);  // every peer is done with our mailbox and buffers of the last round
  BufferDescriptor d;
  d.epoch = epoch_;
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
  for (int p = 0; p < dom.size(); ++p) waitPeer(ctx, p, kFlagStaged, epoch_);
}

DirectPath DirectCall::decided(DirectPath path) {
  path_ = path;
  TIERCC_LOG(Trace, Coll) << ctx_.what << ": "
                          << (path == DirectPath::Symmetric     ? "zero copy (symmetric buffers)"
                              : path == DirectPath::CrossMemory ? "single copy (cross-memory attach)"
                                                                : "staged (no direct path every rank can take)");
  return path;
}

BufferDescriptor DirectCall::of(int peer) const {
  BufferDescriptor d;
  std::memcpy(&d, ctx_.domain.mailbox(peer), sizeof(d));
  return d;
}

const std::byte* DirectCall::peerSend(int peer) const {
  return ctx_.domain.symmetric()->peerAddress(peer, of(peer).send);
}

std::byte* DirectCall::peerRecv(int peer) const { return ctx_.domain.symmetric()->peerAddress(peer, of(peer).recv); }

void DirectCall::copyFrom(int peer, bool fromSend, std::size_t offset, void* dst, std::size_t len) {
  if (len == 0) return;
  if (path_ == DirectPath::Symmetric) {
    std::memcpy(dst, (fromSend ? peerSend(peer) : peerRecv(peer)) + offset, len);
  } else {
    const BufferDescriptor d = of(peer);
    ctx_.domain.readPeer(peer, (fromSend ? d.sendAddr : d.recvAddr) + offset, dst, len);
  }
  ctx_.movedUp(len);
}

void DirectCall::copyFromSend(int peer, std::size_t offset, void* dst, std::size_t len) {
  copyFrom(peer, true, offset, dst, len);
}

void DirectCall::copyFromRecv(int peer, std::size_t offset, void* dst, std::size_t len) {
  copyFrom(peer, false, offset, dst, len);
}

std::uint32_t DirectCall::claimEpochs(std::uint32_t n) {
  const std::uint32_t first = epoch_;
  epoch_ = first + n - 1;
  ctx_.epoch = epoch_;
  return first;
}

void DirectCall::finish() {
  endRound(ctx_, epoch_);
  for (int p = 0; p < ctx_.domain.size(); ++p) waitPeer(ctx_, p, kFlagReleased, epoch_);
}

void DirectCall::abandon() { endRound(ctx_, epoch_); }

}  // namespace tiercc
