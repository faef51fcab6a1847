// The UCX transport's setup, teardown and posting of operations (see ucx_transport.hpp); its
// progress, completion and failure handling live in ucx_progress.cpp.
#include "transport/ucx/ucx_transport.hpp"

#include <sys/eventfd.h>
#include <ucs/debug/log_def.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <string_view>

#include "bootstrap/store.hpp"
#include "core/errors.hpp"
#include "core/log.hpp"
#include "transport/ucx/ucx_resources.hpp"
#include "transport/ucx/ucx_transport_impl.hpp"

namespace tiercc {
namespace ucxnet {

namespace {

// How long teardown lets endpoints flush what they still owe peers before forcing them shut.
constexpr auto kCloseTimeout = std::chrono::seconds(5);

void onSend(void* request, ucs_status_t status, void* user) {
  auto* p = static_cast<Pending*>(user);
  p->transport->requestDone(*p, request, status);
}

void onHeader(void* request, ucs_status_t status, const ucp_tag_recv_info_t* info, void* user) {
  auto* p = static_cast<Pending*>(user);
  if (status == UCS_OK) p->headerArrived = info->length == sizeof(SendHeader);
  p->transport->requestDone(*p, request, status);
}

void onPayload(void* request, ucs_status_t status, const ucp_tag_recv_info_t* info, void* user) {
  auto* p = static_cast<Pending*>(user);
  if (status == UCS_OK) p->payloadBytes = info->length;
  p->transport->requestDone(*p, request, status);
}

void onEndpointError(void* arg, ucp_ep_h, ucs_status_t status) {
  auto* peer = static_cast<Peer*>(arg);
  peer->transport->endpointFailed(*peer, status);
}

// Silences UCX's "no active messages transport ... no peer failure handler" error while the
// endpoint is tried with error handling: tiercc falls back and says so itself.
ucs_log_func_rc_t quietSelection(const char* file, unsigned, const char*, ucs_log_level_t level,
                                 const ucs_log_component_config_t*, const char*, va_list) {
  std::string_view f(file);
  bool selection = f.size() >= 8 && f.substr(f.size() - 8) == "select.c";
  return selection && level <= UCS_LOG_LEVEL_ERROR ? UCS_LOG_FUNC_RC_STOP : UCS_LOG_FUNC_RC_CONTINUE;
}

}  // namespace

UcxTransport::UcxTransport(Store& store, const TransportSetup& setup)
    : context_(std::make_shared<UcxContext>()),
      regions_(context_),
      rank_(setup.rank),
      self_(ProcessIdentity::self()),
      peerName_(setup.peerName),
      addressable_(static_cast<std::size_t>(std::max(setup.worldSize, 0)), false),
      laterStore_(setup.laterStore),
      laterTimeout_(std::chrono::duration_cast<std::chrono::milliseconds>(setup.deadline.remaining())) {
  TIERCC_REQUIRE_ARG(setup.worldSize <= kMaxRanks, "ucx transport: at most ", kMaxRanks, " ranks, got ", setup.worldSize);
  for (int peer : setup.peers) addressable_.at(static_cast<std::size_t>(peer)) = true;
  wakeFd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wakeFd_ < 0) failErrno("eventfd");
  try {
    createWorker();
    publishAddress(store);
    connectAtInit(store, setup);
  } catch (...) {
    closeAll();
    throw;
  }
  TIERCC_LOG(Info, Net) << "ucx transport connected to " << peers_.size() << " peer(s)"
                        << (laterStore_ ? "; the others connect on first use" : "");
}

UcxTransport::~UcxTransport() { closeAll(); }

void UcxTransport::createWorker() {
  ucp_worker_params_t params{};
  params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  params.thread_mode = UCS_THREAD_MODE_SERIALIZED;  // mutex_ serialises; abort() comes from any thread
  ucs_status_t status = ucp_worker_create(context_->get(), &params, &worker_);
  if (status != UCS_OK) fail(ErrorCode::TransportError, "ucx transport: ucp_worker_create: ", statusText(status));
  status = ucp_worker_get_efd(worker_, &workerFd_);
  if (status != UCS_OK) fail(ErrorCode::TransportError, "ucx transport: ucp_worker_get_efd: ", statusText(status));
}

// Every rank publishes its worker address and process before it connects to anyone, so a peer
// connected later finds both in the store.
void UcxTransport::publishAddress(Store& store) {
  ucp_address_t* address = nullptr;
  std::size_t addressBytes = 0;
  ucs_status_t status = ucp_worker_get_address(worker_, &address, &addressBytes);
  if (status != UCS_OK) fail(ErrorCode::TransportError, "ucx transport: ucp_worker_get_address: ", statusText(status));
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(address);
  store.set("net/" + std::to_string(rank_), Bytes(bytes, bytes + addressBytes));
  ucp_worker_release_address(worker_, address);
  store.setString("proc/" + std::to_string(rank_), self_.serialize());
}

// The rail peers (or every peer, without a store for later ones) get endpoints now and are wired
// up before init returns; the rest get theirs on their first operation (usablePeer).
void UcxTransport::connectAtInit(Store& store, const TransportSetup& setup) {
  const std::vector<int>& atInit = laterStore_ ? setup.connectAtInit : setup.peers;
  for (int rank : atInit) {
    TIERCC_REQUIRE_ARG(rank >= 0 && rank < setup.worldSize && addressable_[static_cast<std::size_t>(rank)],
                       "ucx transport: init peer ", rank, " is not among the peers");
    Contact contact = fetchContact(store, rank, setup.deadline);
    std::lock_guard<std::mutex> lock(mutex_);
    addPeer(rank, contact);
  }
  awaitWireup(store, setup, atInit);
}

UcxTransport::Contact UcxTransport::fetchContact(Store& store, int rank, Deadline deadline) {
  Contact contact;
  contact.address = store.get("net/" + std::to_string(rank), deadline);
  contact.process = ProcessIdentity::parse(store.getString("proc/" + std::to_string(rank), deadline));
  return contact;
}

Peer& UcxTransport::addPeer(int rank, const Contact& contact) {
  Peer& peer = peers_[rank];
  peer.transport = this;
  peer.rank = rank;
  peer.name = peerName_ ? peerName_(rank) : concat("rank ", rank);
  createEndpoint(peer, contact.address);
  if (peer.errorHandling) return peer;
  if (contact.process && contact.process->bootId == self_.bootId) {
    peer.process = contact.process;
    TIERCC_LOG(Info, Net) << "ucx transport: no transport to " << peer.name
                          << " detects peer failure (shared memory in UCX 1.13); watching its process instead";
  } else {
    TIERCC_LOG(Warn, Net) << "ucx transport: no transport to " << peer.name
                          << " detects peer failure: if it dies, waits on it end at their deadline";
  }
  return peer;
}

// With error handling first (a dead peer fails its requests); where no transport to the peer
// supports it (UCX 1.13 shared memory), without, and the caller watches the peer's process.
void UcxTransport::createEndpoint(Peer& peer, const Bytes& address) {
  ucp_ep_params_t params{};
  params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                      UCP_EP_PARAM_FIELD_ERR_HANDLER;
  params.address = reinterpret_cast<const ucp_address_t*>(address.data());
  params.err_mode = UCP_ERR_HANDLING_MODE_PEER;
  params.err_handler.cb = onEndpointError;
  params.err_handler.arg = &peer;
  ucs_log_push_handler(quietSelection);
  ucs_status_t status = ucp_ep_create(worker_, &params, &peer.ep);
  ucs_log_pop_handler();
  if (status == UCS_ERR_UNREACHABLE) {
    params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
    peer.errorHandling = false;
    status = ucp_ep_create(worker_, &params, &peer.ep);
  }
  if (status != UCS_OK)
    fail(ErrorCode::TransportError, "scale-out setup: cannot connect to ", peer.name, " (ucx: ", statusText(status), ")");
}

// Flushes the endpoints of init (which completes their wireup), then waits until those peers
// have too, progressing meanwhile so that their wireup messages to us are answered.
void UcxTransport::awaitWireup(Store& store, const TransportSetup& setup, const std::vector<int>& ranks) {
  std::vector<TransferOp> flushes(peers_.size());
  std::vector<TransferOp*> pending;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    std::size_t i = 0;
    for (auto& [rank, peer] : peers_) {
      TransferOp& op = flushes[i++];
      op.peer = rank;
      Pending& p = newPending(Pending::Type::Write, op, peer);
      p.notified = true;  // a bare flush: no notification follows
      ucp_request_param_t param = sendParam(p);
      track(p, ucp_ep_flush_nbx(peer.ep, &param));
      settle(p);
      pending.push_back(&op);
    }
  }
  wait(pending, setup.deadline, "scale-out setup (ucx wireup)");
  store.setString("ready/" + std::to_string(rank_), "1");
  std::vector<std::string> keys;
  for (int rank : ranks) keys.push_back("ready/" + std::to_string(rank));
  // The store is asked again after 1, 2, 4, ... ms, at most every kReadyPollCap: every rank of
  // the job polls it at once, and at a fixed 5 ms 256 ranks on 2 cores spent the init mostly
  // waking up. Wireup messages from peers wake the sleep and are answered at once meanwhile.
  constexpr auto kReadyPollCap = std::chrono::milliseconds(64);
  auto pollEvery = std::chrono::milliseconds(1);
  auto nextPoll = Clock::now();
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    progress();
    if (Clock::now() >= nextPoll) {
      lock.unlock();
      bool everyone = store.check(keys);
      lock.lock();
      if (everyone) return;
      nextPoll = Clock::now() + pollEvery;
      pollEvery = std::min(pollEvery * 2, kReadyPollCap);
    }
    if (setup.deadline.expired())
      fail(ErrorCode::Timeout, "scale-out setup (ucx): timed out waiting for peers to connect");
    sleep(lock, setup.deadline.capped(std::chrono::duration_cast<std::chrono::milliseconds>(nextPoll - Clock::now())));
  }
}

// Cancels what is still posted, closes every endpoint (flushing what peers are still owed unless
// aborted) and destroys the worker. Bounded: a peer that never answers is forced shut.
void UcxTransport::closeAll() {
  if (worker_) {
    std::unique_lock<std::mutex> lock(mutex_);
    std::vector<void*> cancels;
    for (auto& [key, p] : live_) {
      p->op = nullptr;
      if (p->type == Pending::Type::Recv || p->type == Pending::Type::Notify)
        cancels.insert(cancels.end(), p->requests.begin(), p->requests.end());
    }
    for (void* r : cancels) ucp_request_cancel(worker_, r);
    bool failed = aborted_.load();
    for (auto& [rank, peer] : peers_) failed = failed || !peer.error.empty();
    for (auto& [rank, peer] : peers_) closeEndpoint(peer, failed);
    // A failed job's ranks leave at different times, and UCX 1.13's TCP transport can abort the
    // process when progress meets a peer that left: a connect(2) refused while a wireup reply is
    // queued fails an assertion (ucp_request.c:684 "got REP message", or tcp_ep.c:478). So a
    // failed transport is not progressed again: its forced closes need no progress, and its
    // worker and context are left alive, a few MB for the rest of the process, never touched
    // again (ucp_worker_destroy purges the same queues).
    Deadline deadline = Deadline::after(std::chrono::duration_cast<std::chrono::milliseconds>(kCloseTimeout));
    while (!failed) {
      progress();
      if (!busy() || deadline.expired()) break;
      sleep(lock, deadline.capped(std::chrono::milliseconds(10)));
    }
    if (!failed && busy()) {
      TIERCC_LOG(Warn, Net) << "ucx transport: " << closing_.size() << " endpoint(s) and " << live_.size()
                            << " operation(s) still busy at teardown";
    }
    for (void* r : closing_) ucp_request_free(r);
    closing_.clear();
    if (failed) {
      static std::mutex graveyardMutex;
      static auto* graveyard = new std::vector<std::shared_ptr<UcxContext>>;
      std::lock_guard<std::mutex> keep(graveyardMutex);
      graveyard->push_back(context_);
      TIERCC_LOG(Info, Net) << "ucx transport: a peer failed; the worker is left alive rather than destroyed";
    } else {
      ucp_worker_destroy(worker_);
    }
    worker_ = nullptr;
    live_.clear();
    ready_.clear();
  }
  if (wakeFd_ >= 0) ::close(wakeFd_);
  wakeFd_ = -1;
}

// Teardown waits for endpoint closes and for operations with healthy peers; operations with a
// failed peer may never end and are dropped with the worker.
bool UcxTransport::busy() const {
  if (!closing_.empty()) return true;
  for (auto& [key, p] : live_)
    if (peers_.at(p->peer).error.empty()) return true;
  return false;
}

// A peer not connected yet is connected here: its contact comes from the store without the lock
// (the peer published it at its init; a late peer is waited for), then its endpoint is created,
// and UCX wires it up as the operation progresses.
Peer& UcxTransport::usablePeer(std::unique_lock<std::mutex>& lock, int rank, const char* op) {
  if (aborted_.load()) fail(ErrorCode::Aborted, "ucx transport: ", op, " after the communicator was aborted");
  auto it = peers_.find(rank);
  if (it == peers_.end()) {
    if (!laterStore_ || rank < 0 || static_cast<std::size_t>(rank) >= addressable_.size() ||
        !addressable_[static_cast<std::size_t>(rank)])
      fail(ErrorCode::InvalidArgument, "ucx transport: ", op, " with rank ", rank,
           ", which is not a peer of this transport");
    lock.unlock();
    Contact contact;
    try {
      contact = fetchContact(*laterStore_, rank, Deadline::after(laterTimeout_));
    } catch (const Error& e) {
      lock.lock();
      fail(e.code(), "ucx transport: ", op, " with ", peerName_ ? peerName_(rank) : concat("rank ", rank),
           " (not connected yet): ", e.what());
    }
    lock.lock();
    if (aborted_.load()) fail(ErrorCode::Aborted, "ucx transport: ", op, " after the communicator was aborted");
    it = peers_.find(rank);
    if (it == peers_.end()) return addPeer(rank, contact);
  }
  if (!it->second.error.empty()) fail(it->second.errorCode, it->second.error);
  return it->second;
}

Pending& UcxTransport::newPending(Pending::Type type, TransferOp& op, Peer& peer) {
  auto owned = std::make_unique<Pending>();
  Pending& p = *owned;
  p.transport = this;
  p.type = type;
  p.op = &op;
  p.peer = peer.rank;
  op.complete = false;
  op.doneBytes = 0;
  live_.emplace(&p, std::move(owned));
  return p;
}

ucp_request_param_t UcxTransport::sendParam(Pending& p) {
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  param.cb.send = onSend;
  param.user_data = &p;
  return param;
}

ucp_request_param_t UcxTransport::recvParam(Pending& p, bool payload, ucp_tag_recv_info_t* info) {
  ucp_request_param_t param{};
  // UCX 1.13 leaves recv_info unset on immediate completion, so the length would be lost: a
  // request and its callback every time instead.
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_RECV_INFO |
                       UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
  param.cb.recv = payload ? onPayload : onHeader;
  param.user_data = &p;
  param.recv_info.tag_info = info;
  return param;
}

// Requests that completed at once leave nothing to track; failures to start count as failures.
void UcxTransport::track(Pending& p, ucs_status_ptr_t request) {
  if (request == nullptr) return;
  if (UCS_PTR_IS_ERR(request)) {
    if (p.status == UCS_OK) p.status = UCS_PTR_STATUS(request);
    return;
  }
  ++p.outstanding;
  p.requests.push_back(request);
}

void UcxTransport::settle(Pending& p) {
  if (p.outstanding == 0 && !p.queued) {
    p.queued = true;
    ready_.push_back(&p);
  }
}

void UcxTransport::isend(TransferOp& op) {
  std::unique_lock<std::mutex> lock(mutex_);
  Peer& peer = usablePeer(lock, op.peer, "isend");
  TIERCC_REQUIRE_ARG(op.buf || op.len == 0, "isend: null buffer");
  Pending& p = newPending(Pending::Type::Send, op, peer);
  p.seq = peer.sendSeq++;
  p.header = {op.tag, op.len};
  ucp_request_param_t param = sendParam(p);
  track(p, ucp_tag_send_nbx(peer.ep, &p.header, sizeof(p.header), makeTag(Kind::Header, rank_, p.seq), &param));
  track(p, ucp_tag_send_nbx(peer.ep, op.buf, op.len, makeTag(Kind::Payload, rank_, p.seq), &param));
  settle(p);
}

void UcxTransport::irecv(TransferOp& op) {
  std::unique_lock<std::mutex> lock(mutex_);
  Peer& peer = usablePeer(lock, op.peer, "irecv");
  TIERCC_REQUIRE_ARG(op.buf || op.len == 0, "irecv: null buffer");
  Pending& p = newPending(Pending::Type::Recv, op, peer);
  p.seq = peer.recvSeq++;
  ucp_tag_recv_info_t info{};
  ucp_request_param_t param = recvParam(p, false, &info);
  ucs_status_ptr_t r = ucp_tag_recv_nbx(worker_, &p.header, sizeof(p.header), makeTag(Kind::Header, peer.rank, p.seq),
                                        kFullMask, &param);
  if (r == nullptr) p.headerArrived = info.length == sizeof(p.header);
  track(p, r);
  param = recvParam(p, true, &info);
  r = ucp_tag_recv_nbx(worker_, op.buf, op.len, makeTag(Kind::Payload, peer.rank, p.seq), kFullMask, &param);
  if (r == nullptr) p.payloadBytes = info.length;
  track(p, r);
  settle(p);
}

std::shared_ptr<MemoryRegion> UcxTransport::registerMemory(void* buf, std::size_t len) {
  return regions_.registerMemory(buf, len);
}

void UcxTransport::invalidateMemory(void* buf, std::size_t len) { regions_.invalidate(buf, len); }

ucp_rkey_h UcxTransport::remoteKey(Peer& peer, const Bytes& packed) {
  auto it = peer.rkeys.find(packed);
  if (it != peer.rkeys.end()) return it->second;
  ucp_rkey_h rkey = nullptr;
  ucs_status_t status = ucp_ep_rkey_unpack(peer.ep, packed.data(), &rkey);
  if (status != UCS_OK)
    fail(ErrorCode::TransportError, "iwrite: cannot unpack the region key of ", peer.name, " (ucx: ", statusText(status), ")");
  peer.rkeys.emplace(packed, rkey);
  return rkey;
}

// The data goes first (put, then a flush that completes once it is in the peer's memory); the
// notification follows from finish() when the flush completes.
void UcxTransport::iwrite(WriteOp& op) {
  std::unique_lock<std::mutex> lock(mutex_);
  Peer& peer = usablePeer(lock, op.peer, "iwrite");
  RemoteRegion remote = parseDescriptor(op.remote);
  TIERCC_REQUIRE_ARG(op.remoteOffset <= remote.size && op.len <= remote.size - op.remoteOffset, "iwrite: ", op.len,
                     " bytes at offset ", op.remoteOffset, " exceed the remote region of ", remote.size, " bytes");
  TIERCC_REQUIRE_ARG(op.buf || op.len == 0, "iwrite: null buffer");
  ucp_rkey_h rkey = op.len ? remoteKey(peer, remote.rkey) : nullptr;
  Pending& p = newPending(Pending::Type::Write, op, peer);
  p.seq = peer.writeSeq++;
  p.note = {op.imm, op.len};
  if (op.len) {
    ucp_request_param_t param = sendParam(p);
    track(p, ucp_put_nbx(peer.ep, op.buf, op.len, remote.address + op.remoteOffset, rkey, &param));
    track(p, ucp_ep_flush_nbx(peer.ep, &param));
  }
  settle(p);
}

void UcxTransport::sendNotification(Pending& p) {
  p.notified = true;
  Peer& peer = peers_.at(p.peer);
  ucp_request_param_t param = sendParam(p);
  track(p, ucp_tag_send_nbx(peer.ep, &p.note, sizeof(p.note), makeTag(Kind::Notify, rank_, p.seq), &param));
}

void UcxTransport::inotify(TransferOp& op) {
  std::unique_lock<std::mutex> lock(mutex_);
  Peer& peer = usablePeer(lock, op.peer, "inotify");
  Pending& p = newPending(Pending::Type::Notify, op, peer);
  p.seq = peer.notifySeq++;
  ucp_tag_recv_info_t info{};
  ucp_request_param_t param = recvParam(p, true, &info);
  ucs_status_ptr_t r =
      ucp_tag_recv_nbx(worker_, &p.note, sizeof(p.note), makeTag(Kind::Notify, peer.rank, p.seq), kFullMask, &param);
  if (r == nullptr) p.payloadBytes = info.length;
  track(p, r);
  settle(p);
}

// UCX picks its devices and lanes itself (UCX_NET_DEVICES, UCX_TLS restrict them).
std::string UcxTransport::endpoint() const {
  const char* devices = std::getenv("UCX_NET_DEVICES");
  return concat("UCX_NET_DEVICES=", devices && *devices ? devices : "all", " UCX_TLS=", transportSelection(),
                " (UCX chooses among them)");
}

}  // namespace ucxnet

std::optional<std::string> ucxTransportUnavailable() { return ucxnet::ucxUnavailable(); }

std::optional<std::string> ucxTransportPassedOver() { return ucxnet::ucxOnlyHasSockets(); }

std::unique_ptr<Transport> createUcxTransport(Store& store, const TransportSetup& setup) {
  return std::make_unique<ucxnet::UcxTransport>(store, setup);
}

}  // namespace tiercc
