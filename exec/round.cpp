// Round protocol and transfer batches (see round.hpp).
#include "exec/round.hpp"

namespace tiercc {

std::uint32_t beginRound(CollContext& ctx) { return beginRoundReusing(ctx, 1); }

std::uint32_t beginRoundReusing(CollContext& ctx, std::uint32_t inFlight) {
  Domain& dom = ctx.domain;
  const std::uint32_t epoch = ++ctx.epoch;
  ctx.scratch.afterOneShot = ctx.scratch.afterMailboxOneShot = false;
  // A deadline per round, not per collective: a long message that keeps moving never times out.
  if (ctx.timeout.count() > 0) ctx.deadline = Deadline::afterCoarse(ctx.timeout);
  for (int p = 0; p < dom.size(); ++p)
    if (p != dom.localRank()) dom.waitUntil(p, kFlagReleased, epoch - inFlight, ctx.deadline, ctx.what);
  return epoch;
}

void endRound(CollContext& ctx, std::uint32_t epoch) { ctx.domain.signal(kFlagReleased, epoch); }

void waitPeer(CollContext& ctx, int peer, DomainFlag flag, std::uint32_t epoch) {
  if (peer != ctx.domain.localRank()) ctx.domain.waitUntil(peer, flag, epoch, ctx.deadline, ctx.what);
}

void TransferBatch::send(int peer, std::uint64_t tag, const std::byte* buf, std::size_t len) {
  if (pending_.empty()) firstPost_ = Clock::now();
  TransferOp& op = ops_.emplace_back();
  op.peer = peer;
  op.isSend = true;
  op.tag = tag;
  op.buf = const_cast<std::byte*>(buf);  // sends only read it
  op.len = len;
  ctx_.transport->isend(op);
  pending_.push_back(&op);
  // A flat algorithm also talks to ranks of its own domain over the transport: that traffic
  // is scale-up (in a real domain it would ride the fast links), and is counted and paced so.
  if (ctx_.topo.domainOf(peer) == ctx_.topo.domain()) {
    ctx_.stats.scaleUpBytes += len;
    insideBytes_ += len;
    sentInside_ = true;
  } else {
    ctx_.stats.scaleOutBytes += len;
    sentBytes_ += len;
    sent_ = true;
  }
}

void TransferBatch::recv(int peer, std::uint64_t tag, std::byte* buf, std::size_t len) {
  if (pending_.empty()) firstPost_ = Clock::now();
  TransferOp& op = ops_.emplace_back();
  op.peer = peer;
  op.tag = tag;
  op.buf = buf;
  op.len = len;
  ctx_.transport->irecv(op);
  pending_.push_back(&op);
}

void TransferBatch::wait() {
  if (pending_.empty()) return;
  ctx_.transport->wait(pending_, ctx_.deadline, ctx_.what);
  pending_.clear();
  // Only the sender pays: the real transfer overlapped the modelled one since the first post,
  // and the receivers see the delay at their next step that depends on this rank.
  if (sent_ && ctx_.scaleOutLink) ctx_.scaleOutLink->charge(sentBytes_, firstPost_);
  if (sentInside_ && ctx_.scaleUpLink) ctx_.scaleUpLink->charge(insideBytes_, firstPost_);
  sentBytes_ = insideBytes_ = 0;
  sent_ = sentInside_ = false;
}

}  // namespace tiercc
