// The per-peer message protocol of the ibverbs transport (see ib_connection.hpp).
#include "transport/ibverbs/ib_connection.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>

#include "core/errors.hpp"
#include "core/log.hpp"

namespace tiercc::ib {

namespace {

constexpr std::uint32_t kWantInline = 256;
constexpr std::uint32_t kExtraSendDepth = 128;  // room for rendezvous write chunks and probes

// A failed work completion, as the error the peer's pending operations fail with.
std::pair<ErrorCode, std::string> describeFailure(const ibv_wc& wc, const std::string& name) {
  const char* status = ibv_wc_status_str(wc.status);
  switch (wc.status) {
    case IBV_WC_RETRY_EXC_ERR:
    case IBV_WC_RNR_RETRY_EXC_ERR:
      return {ErrorCode::PeerFailure, concat(name, " stopped answering on the scale-out tier (ibverbs: ", status,
                                             "; the peer died or the path to it is down)")};
    // The peer's side refused: a peer that dies tears down its registrations before its queue
    // pair, and one that failed or aborted drops its receive buffers, so our write finds none.
    case IBV_WC_REM_ACCESS_ERR:
    case IBV_WC_REM_OP_ERR:
    case IBV_WC_REM_INV_REQ_ERR:
    case IBV_WC_REM_ABORT_ERR:
      return {ErrorCode::PeerFailure, concat(name, " failed on the scale-out tier (ibverbs: ", status,
                                             "; the peer died, aborted or dropped the buffer we were writing to)")};
    default:
      return {ErrorCode::TransportError, concat(name, ": ibverbs work request failed on the scale-out tier: ", status,
                                                " (vendor error 0x", std::hex, wc.vendor_err, ")")};
  }
}

}  // namespace

Connection::Connection(Shared& shared, std::uint32_t index, int peer, std::string name)
    : shared_(shared), index_(index), peer_(peer), name_(std::move(name)) {}

void Connection::create(ibv_cq* cq) {
  const std::uint32_t depth = shared_.credits + kSlack;
  sqDepth_ = depth + kExtraSendDepth;
  std::uint32_t gotInline = 0;
  qp_ = createRcQp(shared_.pd, cq, sqDepth_, depth, kWantInline, gotInline);
  maxInline_ = std::min(gotInline, kWantInline);
  const std::size_t slot = shared_.slotBytes();
  recvSlab_.resize(depth * slot);
  sendSlab_.resize(depth * slot);
  recvMr_.reset(ibv_reg_mr(shared_.pd, recvSlab_.data(), recvSlab_.size(), IBV_ACCESS_LOCAL_WRITE));
  sendMr_.reset(ibv_reg_mr(shared_.pd, sendSlab_.data(), sendSlab_.size(), IBV_ACCESS_LOCAL_WRITE));
  if (!recvMr_ || !sendMr_) failErrno("ibv_reg_mr of the bounce buffers for " + name_);
  for (std::uint32_t i = 0; i < depth; ++i) freeSendSlots_.push_back(static_cast<int>(i));
}

void Connection::connect(const DeviceChoice& choice, std::uint32_t localPsn, const QpAddress& remote,
                         const QpTuning& tuning) {
  connectRcQp(qp_.get(), choice, localPsn, remote, tuning, name_);
  // Receives go up before the peer hears we are ready (the Store barrier after this).
  for (std::uint32_t i = 0; i < shared_.credits + kSlack; ++i) repost(i, false);
  if (failed()) fail(errorCode_, error_);
}

void Connection::repost(std::uint32_t slot, bool countsAsCredit) {
  ibv_sge sge{reinterpret_cast<std::uintptr_t>(recvSlab_.data() + slot * shared_.slotBytes()),
              static_cast<std::uint32_t>(shared_.slotBytes()), recvMr_->lkey};
  ibv_recv_wr wr{};
  wr.wr_id = makeWrId(true, index_, slot);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  if (int rc = ibv_post_recv(qp_.get(), &wr, &bad))
    return poison(ErrorCode::TransportError, concat("ibv_post_recv for ", name_, ": ", std::strerror(rc)));
  if (countsAsCredit) ++reposted_;
}

void Connection::finish(TransferOp& op) {
  op.doneBytes = op.len;
  op.headerDone = true;  // finished; `complete` follows once every earlier op is complete too
}

static std::shared_ptr<IbRegion> registeredFor(Shared& shared, std::byte* buf, std::size_t len) {
  // A user registration covering the buffer is reused. Other buffers are registered for this
  // operation only: caching by address would go stale when the caller frees and reallocates.
  if (auto hit = shared.cache->lookup(buf, len)) return hit;
  return registerRegion(shared.pd, buf, len);
}

void Connection::isend(TransferOp& op) {
  op.complete = op.headerDone = false;
  op.doneBytes = 0;
  const bool large = op.len > shared_.eagerLimit;
  std::shared_ptr<IbRegion> mr = large ? registeredFor(shared_, op.buf, op.len) : nullptr;
  sends_.push_back({&op, nextSendSeq_++, large, false, false, mr});
  SendState& s = sends_.back();
  Outgoing m;
  m.header.kind = large ? MsgKind::Rts : MsgKind::Eager;
  m.header.tag = op.tag;
  m.header.len = op.len;
  m.header.seq = s.seq;
  if (!large) {
    m.payload = op.buf;
    m.payloadLen = op.len;
    m.finishAtPost = true;
    m.finishes = &op;
  }
  outbox_.push_back(std::move(m));
  if (auto it = earlyCts_.find(s.seq); large && it != earlyCts_.end()) {
    MsgHeader cts = it->second;
    earlyCts_.erase(it);
    onCts(s, cts);
  }
}

void Connection::irecv(TransferOp& op) {
  op.complete = op.headerDone = false;
  op.doneBytes = 0;
  const bool large = op.len > shared_.eagerLimit;
  std::shared_ptr<IbRegion> mr = large ? registeredFor(shared_, op.buf, op.len) : nullptr;
  recvs_.push_back({&op, nextRecvSeq_++, large, false, false, mr});
  RecvState& r = recvs_.back();
  if (large) {
    // Clear to send at once: the sender writes as soon as both sides are posted, without an
    // extra round trip after its header.
    Outgoing cts;
    cts.header.kind = MsgKind::Cts;
    cts.header.tag = op.tag;
    cts.header.len = op.len;
    cts.header.addr = reinterpret_cast<std::uintptr_t>(op.buf);
    cts.header.rkey = mr->rkey();
    cts.header.seq = r.seq;
    outbox_.push_back(std::move(cts));
  }
  if (auto it = unexpected_.find(r.seq); it != unexpected_.end()) {
    Unexpected u = std::move(it->second);
    unexpected_.erase(it);
    onHeader(r, u.header, u.payload.data());
  }
}

void Connection::iwrite(WriteOp& op, const RemoteRegion& remote) {
  op.complete = op.headerDone = false;
  op.doneBytes = 0;
  std::shared_ptr<IbRegion> mr = registeredFor(shared_, op.buf, op.len);
  sends_.push_back({&op, 0, false, true, false, mr});
  Outgoing w;
  w.isWrite = true;
  w.usesCredit = true;  // the immediate consumes one of the peer's receives
  w.localAddr = reinterpret_cast<std::uintptr_t>(op.buf);
  w.lkey = mr->lkey();
  w.remoteAddr = remote.addr + op.remoteOffset;
  w.rkey = remote.rkey;
  w.writeLen = static_cast<std::uint32_t>(op.len);
  w.withImm = true;
  w.imm = op.imm;
  w.finishes = &op;
  w.hold = mr;
  outbox_.push_back(std::move(w));
}

void Connection::inotify(TransferOp& op) {
  op.complete = op.headerDone = false;
  notifies_.push_back(&op);
}

RecvState* Connection::recvBySeq(std::uint32_t seq) {
  if (recvs_.empty()) return nullptr;
  std::uint32_t idx = seq - recvs_.front().seq;
  return idx < recvs_.size() ? &recvs_[idx] : nullptr;
}

void Connection::mismatch(const MsgHeader& h, const TransferOp& op, const char* side) {
  poison(ErrorCode::InvalidArgument,  // not the transport's fault: the ranks called different operations
         concat(side[0] == 'r' ? "message from " : "receive posted by ", name_,
                side[0] == 'r' ? " does not match the posted receive: got tag " : " does not match the message sent to it: got tag ",
                h.tag, " length ", h.len, ", expected tag ", op.tag, " length ", op.len,
                " (mismatched collectives across ranks?)"));
}

void Connection::onHeader(RecvState& r, const MsgHeader& h, const std::byte* payload) {
  TransferOp& op = *r.op;
  if (h.tag != op.tag || h.len != op.len || (h.kind == MsgKind::Rts) != r.large) return mismatch(h, op, "recv");
  if (h.kind == MsgKind::Eager) {
    if (h.len) std::memcpy(op.buf, payload, h.len);
    return finish(op);
  }
  r.headerSeen = true;
  if (r.finSeen) finish(op);
}

void Connection::onCts(SendState& s, const MsgHeader& cts) {
  const TransferOp& op = *s.op;
  if (!s.large || cts.tag != op.tag || cts.len != op.len) return mismatch(cts, op, "send");
  s.ctsSeen = true;
  queueRendezvousWrites(s, cts);
}

void Connection::queueRendezvousWrites(SendState& s, const MsgHeader& cts) {
  TransferOp& op = *s.op;
  for (std::size_t off = 0; off < op.len; off += shared_.maxChunk) {
    Outgoing w;
    w.isWrite = true;
    w.usesCredit = false;  // a plain write consumes no receive
    w.localAddr = reinterpret_cast<std::uintptr_t>(op.buf + off);
    w.lkey = s.mr->lkey();
    w.remoteAddr = cts.addr + off;
    w.rkey = cts.rkey;
    w.writeLen = static_cast<std::uint32_t>(std::min(shared_.maxChunk, op.len - off));
    w.hold = s.mr;
    outbox_.push_back(std::move(w));
  }
  // RC executes in order at the receiver: when it sees FIN, the written data is in place.
  Outgoing fin;
  fin.header.kind = MsgKind::Fin;
  fin.header.tag = op.tag;
  fin.header.len = op.len;
  fin.header.seq = s.seq;
  fin.finishes = &op;
  fin.hold = s.mr;
  outbox_.push_back(std::move(fin));
}

void Connection::onCompletion(const ibv_wc& wc) {
  if (failed()) return;  // flushes after the connection was poisoned
  if (wc.wr_id & kRecvBit) {
    if (wc.status != IBV_WC_SUCCESS) {
      auto [code, why] = describeFailure(wc, name_);
      return poison(code, why);
    }
    return onReceive(wc, static_cast<std::uint32_t>(wc.wr_id & 0xffffffffu));
  }
  onSendCompletion(wc);
}

std::optional<std::string> messageFault(std::span<const std::byte> message, std::size_t eagerLimit, MsgHeader& header) {
  if (message.size() < sizeof(header)) return concat("a ", message.size(), "-byte message");
  std::memcpy(&header, message.data(), sizeof(header));
  if (header.magic != kHeaderMagic) return std::string("bad magic");
  switch (header.kind) {
    case MsgKind::Eager:
      if (header.len > eagerLimit || message.size() - sizeof(header) != header.len)
        return concat("an eager message announcing ", header.len, " bytes came with ", message.size() - sizeof(header));
      return std::nullopt;
    case MsgKind::Rts:
    case MsgKind::Cts:
    case MsgKind::Fin:
    case MsgKind::Credit:
    case MsgKind::Goodbye:
      return std::nullopt;
  }
  return concat("message kind ", static_cast<std::uint32_t>(header.kind));
}

void Connection::onReceive(const ibv_wc& wc, std::uint32_t slot) {
  lastHeard_ = std::chrono::steady_clock::now();
  const std::byte* p = recvSlab_.data() + slot * shared_.slotBytes();
  if (wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
    arrived_.emplace_back(ntohl(wc.imm_data), wc.byte_len);
    return repost(slot, true);
  }
  MsgHeader h;
  if (auto fault = messageFault({p, wc.byte_len}, shared_.eagerLimit, h))
    return poison(ErrorCode::TransportError, concat("garbage from ", name_, " (", *fault, ")"));
  peerReposted_ = std::max(peerReposted_, h.credits);
  const std::byte* payload = p + sizeof(h);
  switch (h.kind) {
    case MsgKind::Credit:
      return repost(slot, false);
    case MsgKind::Goodbye:
      peerGone_ = true;
      return repost(slot, false);
    case MsgKind::Eager:
    case MsgKind::Rts:
      if (RecvState* r = recvBySeq(h.seq)) {
        onHeader(*r, h, payload);
      } else if (static_cast<std::int32_t>(h.seq - nextRecvSeq_) >= 0) {
        Unexpected& u = unexpected_[h.seq];
        u.header = h;
        if (h.kind == MsgKind::Eager) u.payload.assign(payload, payload + h.len);
      } else {
        return poison(ErrorCode::TransportError, concat("protocol error: ", name_, " repeated message ", h.seq));
      }
      break;
    case MsgKind::Cts: {
      auto it = std::find_if(sends_.begin(), sends_.end(), [&](const SendState& s) { return !s.isWrite && s.seq == h.seq; });
      if (it != sends_.end()) onCts(*it, h);
      else earlyCts_[h.seq] = h;
      break;
    }
    case MsgKind::Fin: {
      RecvState* r = recvBySeq(h.seq);
      if (!r || !r->large) return poison(ErrorCode::TransportError, concat("protocol error: unexpected FIN from ", name_));
      r->finSeen = true;
      if (r->headerSeen) finish(*r->op);
      break;
    }
    default:
      return poison(ErrorCode::TransportError, concat("garbage from ", name_, " (message kind ", static_cast<std::uint32_t>(h.kind), ")"));
  }
  if (!failed()) repost(slot, true);
}

void Connection::onSendCompletion(const ibv_wc& wc) {
  if (posted_.empty()) return poison(ErrorCode::Internal, concat("ibverbs: unexpected send completion for ", name_));
  Posted rec = std::move(posted_.front());
  posted_.pop_front();
  --sqUsed_;
  if (rec.slot >= 0) freeSendSlots_.push_back(rec.slot);
  if (wc.status != IBV_WC_SUCCESS) {
    auto [code, why] = describeFailure(wc, name_);
    return poison(code, why);
  }
  if (rec.probe) {
    TIERCC_LOG(Trace, Net) << "ibverbs: " << name_ << " answered a liveness probe";
    probing_ = false;
    lastHeard_ = std::chrono::steady_clock::now();
  }
  if (rec.finishes) finish(*rec.finishes);
}

bool Connection::postOne(Outgoing& out, bool bypassCredits) {
  if (!open_ || sqUsed_ >= sqDepth_) return false;
  if (out.usesCredit && !bypassCredits && creditsLeft() == 0) return false;
  ibv_send_wr wr{};
  ibv_sge sge{};
  Posted rec;
  rec.hold = out.hold;
  rec.finishes = out.finishAtPost ? nullptr : out.finishes;
  std::byte inlineBuf[kWantInline];
  if (out.isWrite) {
    sge = {out.localAddr, out.writeLen, out.lkey};
    wr.num_sge = out.writeLen ? 1 : 0;
    wr.opcode = out.withImm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
    if (out.withImm) wr.imm_data = htonl(out.imm);
    wr.wr.rdma.remote_addr = out.remoteAddr;
    wr.wr.rdma.rkey = out.rkey;
  } else {
    out.header.credits = reposted_;
    const std::size_t total = sizeof(MsgHeader) + out.payloadLen;
    std::byte* dst = inlineBuf;
    if (total <= maxInline_) {
      wr.send_flags = IBV_SEND_INLINE;  // copied by the post itself: no bounce buffer
      sge.lkey = 0;
    } else {
      if (freeSendSlots_.empty()) return false;
      rec.slot = freeSendSlots_.back();
      freeSendSlots_.pop_back();
      dst = sendSlab_.data() + static_cast<std::size_t>(rec.slot) * shared_.slotBytes();
      sge.lkey = sendMr_->lkey;
    }
    std::memcpy(dst, &out.header, sizeof(MsgHeader));
    if (out.payloadLen) std::memcpy(dst + sizeof(MsgHeader), out.payload, out.payloadLen);
    sge.addr = reinterpret_cast<std::uintptr_t>(dst);
    sge.length = static_cast<std::uint32_t>(total);
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
  }
  wr.wr_id = makeWrId(false, index_, 0);
  wr.sg_list = &sge;
  wr.send_flags |= IBV_SEND_SIGNALED;
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(qp_.get(), &wr, &bad)) {
    if (rec.slot >= 0) freeSendSlots_.push_back(rec.slot);
    poison(ErrorCode::TransportError, concat("ibv_post_send to ", name_, ": ", std::strerror(rc)));
    return false;
  }
  ++sqUsed_;
  if (out.usesCredit) ++creditsUsed_;
  if (!out.isWrite) advertised_ = reposted_;
  posted_.push_back(std::move(rec));
  if (out.finishAtPost && out.finishes) finish(*out.finishes);
  return true;
}

void Connection::postMessage(MsgKind kind) {
  Outgoing m;
  m.header.kind = kind;
  m.usesCredit = false;
  postOne(m, true);
}

void Connection::pump() {
  if (failed()) return;
  while (!outbox_.empty() && postOne(outbox_.front(), false)) outbox_.pop_front();
  if (failed()) return;
  if (reposted_ - advertised_ >= std::max<std::uint64_t>(1, shared_.credits / 2)) postMessage(MsgKind::Credit);
  while (!notifies_.empty() && !arrived_.empty()) {
    TransferOp& op = *notifies_.front();
    op.tag = arrived_.front().first;
    op.len = op.doneBytes = arrived_.front().second;
    op.complete = true;
    notifies_.pop_front();
    arrived_.pop_front();
  }
  completeInOrder();
  if (peerGone_ && !failed() && expectsInput())
    poison(ErrorCode::PeerFailure, concat(name_, " closed its scale-out connection (ibverbs)"));
}

void Connection::completeInOrder() {
  while (!sends_.empty() && sends_.front().op->headerDone) {
    sends_.front().op->complete = true;
    sends_.pop_front();
  }
  while (!recvs_.empty() && recvs_.front().op->headerDone) {
    recvs_.front().op->complete = true;
    recvs_.pop_front();
  }
}

void Connection::probe() {
  if (!open_ || probing_ || failed() || sqUsed_ >= sqDepth_) return;
  // Zero bytes: no address or rkey is checked (IBA C9-88), yet the peer must acknowledge it.
  ibv_send_wr wr{};
  wr.wr_id = makeWrId(false, index_, 0);
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.send_flags = IBV_SEND_SIGNALED;
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(qp_.get(), &wr, &bad))
    return poison(ErrorCode::TransportError, concat("ibv_post_send (probe) to ", name_, ": ", std::strerror(rc)));
  TIERCC_LOG(Trace, Net) << "ibverbs: probing " << name_ << " after a silence";
  ++sqUsed_;
  Posted rec;
  rec.probe = true;
  posted_.push_back(std::move(rec));
  probing_ = true;
}

void Connection::sayGoodbye() {
  if (!failed()) postMessage(MsgKind::Goodbye);
}

void Connection::poison(ErrorCode code, const std::string& why) {
  if (error_.empty()) {
    // At teardown peers close in any order; that is only news if something was pending.
    if (expectsInput() || !outbox_.empty()) TIERCC_LOG(Info, Net) << "ibverbs: connection to " << name_ << " failed: " << why;
    else TIERCC_LOG(Trace, Net) << "ibverbs: idle connection to " << name_ << " closed: " << why;
    error_ = why;
    errorCode_ = code;
    if (qp_) moveToError(qp_.get());  // the peer can no longer write into our buffers
  }
  outbox_.clear();
  posted_.clear();
  sends_.clear();
  recvs_.clear();
  notifies_.clear();
  unexpected_.clear();
  earlyCts_.clear();
}

std::string Connection::describePending(const TransferOp& op) const {
  if (!open_)
    return concat("connecting to ", name_, " on first use: it has not yet posted an operation with this rank ",
                  "(no queue pair address or no ready mark from it in the store)");
  std::string credits = concat(", ", creditsLeft(), " credit(s) left");
  for (const SendState& s : sends_) {
    if (s.op != &op) continue;
    if (s.isWrite) return concat("writing ", op.len, " bytes into ", name_, "'s memory (one-sided)", credits);
    if (!s.large) return concat("sending ", op.len, " bytes (tag ", op.tag, ") to ", name_, credits);
    if (!s.ctsSeen)
      return concat("sending ", op.len, " bytes (tag ", op.tag, ") to ", name_,
                    ": the peer has not posted the matching receive (no clear-to-send yet)");
    return concat("writing ", op.len, " bytes (tag ", op.tag, ") into ", name_, "'s receive buffer", credits);
  }
  for (const RecvState& r : recvs_) {
    if (r.op != &op) continue;
    if (!r.large || !r.headerSeen)
      return concat("receiving ", op.len, " bytes (tag ", op.tag, ") from ", name_, ": no message from it yet");
    return concat("receiving ", op.len, " bytes (tag ", op.tag, ") from ", name_, ": the data has not all arrived");
  }
  return concat("waiting for a one-sided write notification from ", name_);
}

}  // namespace tiercc::ib
