// Progress, completion and failure of the UCX transport (see ucx_transport_impl.hpp): ucp
// callbacks only record what happened; finish() then completes the caller's operation or
// poisons its peer, outside any UCX call. Waiting spins briefly, then sleeps on the worker's
// event fd (and abort()'s eventfd) with a slice, so keepalive still runs.
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "core/errors.hpp"
#include "core/log.hpp"
#include "transport/ucx/ucx_transport_impl.hpp"

namespace tiercc::ucxnet {

namespace {

constexpr auto kSpin = std::chrono::microseconds(50);
// Longest sleep between progress calls: UCX's keepalive (dead-peer detection) runs in progress.
constexpr auto kSleepSlice = std::chrono::milliseconds(100);
// How often peers that UCX cannot watch are checked for being alive.
constexpr auto kLivenessInterval = std::chrono::milliseconds(200);

}  // namespace

void UcxTransport::requestDone(Pending& p, void* request, ucs_status_t status) {
  std::erase(p.requests, request);
  ucp_request_free(request);
  if (status != UCS_OK && p.status == UCS_OK) p.status = status;
  --p.outstanding;
  settle(p);
}

void UcxTransport::endpointFailed(Peer& peer, ucs_status_t status) {
  if (peer.epFailure != UCS_OK) return;
  peer.epFailure = status;
  failedPeers_.push_back(&peer);
}

void UcxTransport::progress() {
  bool worked = true;
  while (worked) {
    while (ucp_worker_progress(worker_) != 0) {
    }
    worked = !ready_.empty() || !failedPeers_.empty();
    while (!ready_.empty()) {
      Pending* p = ready_.front();
      ready_.pop_front();
      p->queued = false;
      finish(*p);
    }
    std::vector<Peer*> failed;
    failed.swap(failedPeers_);
    for (Peer* peer : failed)
      poison(*peer, ErrorCode::PeerFailure,
             concat(peer->name, " failed on the scale-out tier (ucx: ", statusText(peer->epFailure), ")"));
  }
  checkLiveness();
  std::erase_if(closing_, [](void* r) {
    if (ucp_request_check_status(r) == UCS_INPROGRESS) return false;
    ucp_request_free(r);
    return true;
  });
}

void UcxTransport::checkLiveness() {
  auto now = Clock::now();
  if (now < nextLivenessCheck_) return;
  nextLivenessCheck_ = now + kLivenessInterval;
  for (auto& [rank, peer] : peers_)
    if (peer.process && peer.error.empty() && !peer.process->alive())
      poison(peer, ErrorCode::PeerFailure,
             concat(peer.name, " failed on the scale-out tier (ucx: its process ", peer.process->pid, " is gone)"));
}

void UcxTransport::finish(Pending& p) {
  Peer& peer = peers_.at(p.peer);
  if (p.op && p.status == UCS_OK && p.type == Pending::Type::Write && !p.notified && peer.ep) {
    sendNotification(p);
    if (p.outstanding > 0) return;  // finish() again when the notification has gone
  }
  if (p.op) {
    TransferOp& op = *p.op;
    if (p.type == Pending::Type::Recv && (p.status == UCS_OK || p.status == UCS_ERR_MESSAGE_TRUNCATED)) {
      completeReceive(p, peer);
    } else if (p.status != UCS_OK) {
      poison(peer, ErrorCode::PeerFailure, concat(peer.name, " failed on the scale-out tier (ucx: ", statusText(p.status), ")"));
    } else if (p.type == Pending::Type::Notify && p.payloadBytes != sizeof(p.note)) {
      poison(peer, ErrorCode::TransportError, concat("malformed write notification from ", peer.name));
    } else {
      if (p.type == Pending::Type::Notify) {
        op.tag = p.note.imm;
        op.len = p.note.len;
      }
      op.doneBytes = op.len;
      op.complete = true;
    }
  }
  live_.erase(&p);
}

// The header says what the sender sent; it must be what this receive expects.
void UcxTransport::completeReceive(Pending& p, Peer& peer) {
  TransferOp& op = *p.op;
  if (p.status == UCS_OK && p.headerArrived && p.header.tag == op.tag && p.header.len == op.len &&
      p.payloadBytes == op.len) {
    op.doneBytes = op.len;
    op.complete = true;
    return;
  }
  std::string got = p.headerArrived ? concat("tag ", p.header.tag, " length ", p.header.len)
                    : p.status == UCS_ERR_MESSAGE_TRUNCATED ? concat("more than ", op.len, " bytes")
                                                            : concat(p.payloadBytes, " bytes without a header");
  // Not the transport's fault: the ranks called different operations (a caller's error).
  poison(peer, ErrorCode::InvalidArgument,
         concat("message from ", peer.name, " does not match the posted receive: got ", got, ", expected tag ", op.tag,
                " length ", op.len, " (mismatched collectives across ranks?)"));
}

// Fails every operation with the peer (once), stops UCX from writing into the callers' receive
// buffers, and closes the endpoint so the peer notices where the transport can tell it.
void UcxTransport::poison(Peer& peer, ErrorCode code, const std::string& why) {
  if (!peer.error.empty()) return;
  peer.error = why;
  peer.errorCode = code;
  TIERCC_LOG(Info, Net) << "ucx transport: " << why;
  std::vector<void*> cancels;
  for (auto& [key, p] : live_) {
    if (p->peer != peer.rank) continue;
    p->op = nullptr;
    if (p->type == Pending::Type::Recv || p->type == Pending::Type::Notify)
      cancels.insert(cancels.end(), p->requests.begin(), p->requests.end());
  }
  for (void* r : cancels) ucp_request_cancel(worker_, r);
  closeEndpoint(peer, true);
}

void UcxTransport::closeEndpoint(Peer& peer, bool force) {
  if (!peer.ep) return;
  for (auto& [packed, rkey] : peer.rkeys) ucp_rkey_destroy(rkey);
  peer.rkeys.clear();
  // Forcing an endpoint without error handling is undefined in UCX: ucp_worker_destroy takes it.
  if (force && !peer.errorHandling) return;
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  param.flags = force ? UCP_EP_CLOSE_FLAG_FORCE : 0;
  ucs_status_ptr_t r = ucp_ep_close_nbx(peer.ep, &param);
  peer.ep = nullptr;
  if (r && !UCS_PTR_IS_ERR(r)) closing_.push_back(r);
}

void UcxTransport::throwIfFailed(const TransferOp& op, const std::string& what) {
  if (op.complete) return;
  if (aborted_.load()) fail(ErrorCode::Aborted, what, ": communicator aborted");
  auto it = peers_.find(op.peer);
  if (it == peers_.end()) fail(ErrorCode::InvalidArgument, what, ": rank ", op.peer, " is not a connected peer");
  if (!it->second.error.empty()) fail(it->second.errorCode, what, ": ", it->second.error);
}

// Arms the worker and sleeps in poll(2) until it has events, abort() is called, or the deadline
// (capped by the caller or kSleepSlice) passes. Returns at once if events are already pending.
void UcxTransport::sleep(std::unique_lock<std::mutex>& lock, Deadline deadline) {
  if (ucp_worker_arm(worker_) == UCS_ERR_BUSY) return;
  pollfd fds[2] = {{workerFd_, POLLIN, 0}, {wakeFd_, POLLIN, 0}};
  auto ms = std::min(deadline.remaining(), std::chrono::milliseconds(kSleepSlice)).count();
  lock.unlock();
  ::poll(fds, 2, static_cast<int>(std::max<std::int64_t>(ms, 1)));
  lock.lock();
}

void UcxTransport::wait(const std::vector<TransferOp*>& ops, Deadline deadline, const std::string& what) {
  std::unique_lock<std::mutex> lock(mutex_);
  auto spinUntil = Clock::now() + kSpin;
  while (true) {
    if (aborted_.load()) fail(ErrorCode::Aborted, what, ": communicator aborted");
    progress();
    bool allDone = true;
    for (TransferOp* op : ops) {
      throwIfFailed(*op, what);
      allDone = allDone && op->complete;
    }
    if (allDone) return;
    if (deadline.expired()) {
      for (TransferOp* op : ops) {
        if (op->complete) continue;
        Peer& peer = peers_.at(op->peer);
        std::string detail = concat(op->isSend ? "sending " : "waiting for ", op->len, " bytes ",
                                    op->isSend ? "to " : "from ", peer.name);
        // Its messages may still come: the sequence with this peer can't be trusted now.
        poison(peer, ErrorCode::Timeout, concat("an earlier operation with ", peer.name, " timed out; the connection is unusable"));
        fail(ErrorCode::Timeout, what, ": timed out on the scale-out tier (ucx) ", detail);
      }
    }
    if (Clock::now() < spinUntil) continue;
    sleep(lock, deadline);
    spinUntil = Clock::now() + kSpin;
  }
}

bool UcxTransport::test(TransferOp& op, const std::string& what) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (aborted_.load()) fail(ErrorCode::Aborted, what, ": communicator aborted");
  progress();
  throwIfFailed(op, what);
  return op.complete;
}

void UcxTransport::abort() {
  aborted_.store(true);
  std::uint64_t one = 1;
  ssize_t ignored = ::write(wakeFd_, &one, sizeof(one));
  (void)ignored;
  std::lock_guard<std::mutex> lock(mutex_);
  if (!worker_) return;
  for (auto& [rank, peer] : peers_) poison(peer, ErrorCode::Aborted, concat("the communicator was aborted (", peer.name, ")"));
}

}  // namespace tiercc::ucxnet
