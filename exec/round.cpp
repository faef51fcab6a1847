// Round protocol and transfer batches (see round.hpp).
#include "exec/round.hpp"

#include "exec/call_stamp.hpp"

namespace tiercc {

std::uint32_t beginRound(ExecContext& ctx, std::uint32_t inFlight) {
  Domain& dom = ctx.domain;
  const std::uint32_t epoch = ++ctx.epoch;
  ctx.scratch.afterOneShot = ctx.scratch.afterRootedOneShot = false;
  ctx.scratch.mailboxSlot = 0;
  ctx.scratch.roundsSinceBegin = 0;
  ctx.renewDeadline();
  for (int p = 0; p < dom.size(); ++p)
    if (p != dom.localRank()) {
      if (ctx.live) ctx.live->waiting(ctx.topo.rankAt(ctx.topo.domain(), p), Tier::ScaleUp);
      dom.waitUntil(p, kFlagReleased, epoch - inFlight, ctx.deadline, ctx.what);
    }
  if (ctx.live) ctx.live->done();
  learnPeersFinishedBefore(ctx.scratch, epoch - inFlight + 1);  // they released epoch - inFlight
  return epoch;
}

void endRound(ExecContext& ctx, std::uint32_t epoch) { ctx.domain.signal(kFlagReleased, epoch); }

void waitPeer(ExecContext& ctx, int peer, DomainFlag flag, std::uint32_t epoch, bool compareCalls) {
  if (peer == ctx.domain.localRank()) return;
  if (ctx.live) ctx.live->waiting(ctx.topo.rankAt(ctx.topo.domain(), peer), Tier::ScaleUp);
  ctx.domain.waitUntil(peer, flag, epoch, ctx.deadline, ctx.what);
  if (ctx.live) ctx.live->done();
  if (compareCalls) comparePeerCall(ctx, peer);
}

void TransferBatch::begin(ExecContext& ctx, StepCount& counts) {
  ctx_ = &ctx;
  counts_ = &counts;
  used_ = 0;
  pending_.clear();
  sentOut_ = sentInside_ = 0;
  anyOut_ = anyInside_ = false;
}

TransferOp& TransferBatch::add(const TransferOp& op) {
  if (pending_.empty() && (ctx_->scaleOutLink || ctx_->scaleUpLink)) firstPost_ = Clock::now();  // for charge()
  const std::size_t i = used_++;
  if (i < inline_.size()) return inline_[i] = op;
  const std::size_t extra = i - inline_.size();
  if (extra / 64 >= more_.size()) more_.push_back(std::make_unique<TransferOp[]>(64));
  return more_[extra / 64][extra % 64] = op;
}

void TransferBatch::send(int peer, std::uint64_t tag, const std::byte* buf, std::size_t len) {
  // The op's buffer is mutable, but sends only read it.
  TransferOp& op = add({.peer = peer, .isSend = true, .tag = tag, .buf = const_cast<std::byte*>(buf), .len = len});
  ctx_->transport->isend(op);
  pending_.push_back(&op);
  // A flat algorithm also talks to ranks of its own domain over the transport: that traffic
  // is scale-up (in a real domain it would ride the fast links), and is counted and paced so.
  if (ctx_->topo.domainOf(peer) == ctx_->topo.domain()) {
    counts_->scaleUpBytes += len;
    sentInside_ += len;
    anyInside_ = true;
  } else {
    counts_->scaleOutBytes += len;
    sentOut_ += len;
    anyOut_ = true;
  }
}

void TransferBatch::recv(int peer, std::uint64_t tag, std::byte* buf, std::size_t len) {
  TransferOp& op = add({.peer = peer, .tag = tag, .buf = buf, .len = len});
  ctx_->transport->irecv(op);
  pending_.push_back(&op);
}

void TransferBatch::wait() {
  if (pending_.empty()) return;
  if (LiveState* live = ctx_->live) {
    const int peer = pending_.front()->peer;  // the first of the batch: a snapshot, not the whole set
    live->waiting(peer, ctx_->topo.domainOf(peer) == ctx_->topo.domain() ? Tier::ScaleUp : Tier::ScaleOut);
  }
  ctx_->transport->wait(pending_, ctx_->deadline, ctx_->what);
  if (ctx_->live) ctx_->live->done();
  pending_.clear();
  used_ = 0;
  // Only the sender pays: the real transfer overlapped the modelled one since the first post,
  // and the receivers see the delay at their next step that depends on this rank.
  if (anyOut_ && ctx_->scaleOutLink) ctx_->scaleOutLink->charge(sentOut_, firstPost_);
  if (anyInside_ && ctx_->scaleUpLink) ctx_->scaleUpLink->charge(sentInside_, firstPost_);
  sentOut_ = sentInside_ = 0;
  anyOut_ = anyInside_ = false;
}

}  // namespace tiercc
