// The direct round (see direct.hpp): descriptors in the mailboxes, the agreed path, reads of
// peers' buffers and the closing barrier.
#include "exec/direct.hpp"

#include <cstring>

#include "exec/round.hpp"
#include "core/errors.hpp"
#include "core/log.hpp"

namespace tiercc {
namespace {

// Below this size the staged algorithms win: a direct call adds a barrier at its end (a rank's
// buffers may be read until every peer is done), where staged calls release lazily. Measured
// on the 2-core host (docs/performance.md): the crossover is between 16 and 64 KiB.
constexpr std::size_t kDirectMinBytes = 32 * 1024;

static_assert(sizeof(BufferDescriptor) <= Domain::kMailboxBytes);

std::string describe(const CallShape& s) {
  std::string d = concat(s.bytes, " bytes of ", toString(static_cast<DataType>(s.dt)));
  if (s.op >= 0) d += concat(", op ", toString(static_cast<ReduceOp>(s.op)));
  if (s.root >= 0) d += concat(", root ", s.root);
  return d;
}

}  // namespace

bool runsStaged(CollContext& ctx) {
  ctx.stats.scaleUpPath = "staged";
  return false;
}

bool directWorthTrying(CollContext& ctx, std::size_t bytes, std::size_t crossMemoryMinBytes) {
  return ctx.topo.numDomains() == 1 && directWorthTryingInDomain(ctx, bytes, crossMemoryMinBytes);
}

bool directWorthTryingInDomain(CollContext& ctx, std::size_t bytes, std::size_t crossMemoryMinBytes) {
  Domain& dom = ctx.domain;
  if (dom.size() < 2 || bytes < kDirectMinBytes) return false;
  const SymmetricMemory* heap = dom.symmetric();
  return (heap && heap->liveAllocations() > 0) || (bytes >= crossMemoryMinBytes && dom.crossMemoryAttach());
}

DirectCall::DirectCall(CollContext& ctx, const CallShape& shape, const void* send, std::size_t sendBytes,
                       const void* recv, std::size_t recvBytes)
    : ctx_(ctx) {
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
  for (int p = 0; p < dom.size(); ++p) waitPeer(ctx, p, kFlagStaged, epoch_);
  requireSameShape();
}

// Every rank sees every descriptor and compares each with local rank 0's, so every rank fails
// with the same message, naming the same rank. A descriptor of an older epoch means its rank
// raised Staged for a staged round instead: it decided against the direct round, which only a
// different size (or another collective) can make it do.
void DirectCall::requireSameShape() const {
  const int domain = ctx_.topo.domain();
  const BufferDescriptor first = of(0);
  for (int p = 0; p < ctx_.domain.size(); ++p) {
    const BufferDescriptor d = of(p);
    const int rank = ctx_.topo.rankAt(domain, p);
    if (d.epoch != epoch_)
      fail(ErrorCode::InvalidArgument, ctx_.what, ": rank ", rank,
           " did not take part in this call's direct round: it runs another collective or another size "
           "(every rank must pass the same count, datatype, op and root)");
    if (!(d.shape == first.shape))
      fail(ErrorCode::InvalidArgument, ctx_.what, ": rank ", rank, " passed ", describe(d.shape), " but rank ",
           ctx_.topo.rankAt(domain, 0), " passed ", describe(first.shape),
           ": every rank must pass the same count, datatype, op and root");
  }
}

DirectPath DirectCall::decided(DirectPath path) {
  path_ = path;
  ctx_.stats.scaleUpPath = path == DirectPath::Symmetric     ? "zero_copy"
                           : path == DirectPath::CrossMemory ? "cma"
                                                             : "staged";
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

void DirectCall::renewDeadline() {
  if (ctx_.timeout.count() > 0) ctx_.deadline = Deadline::afterCoarse(ctx_.timeout);
}

void DirectCall::finish() {
  endRound(ctx_, epoch_);
  renewDeadline();
  for (int p = 0; p < ctx_.domain.size(); ++p) waitPeer(ctx_, p, kFlagReleased, epoch_);
}

void DirectCall::abandon() {
  ctx_.stats.scaleUpPath = "staged";
  endRound(ctx_, epoch_);
}

}  // namespace tiercc
