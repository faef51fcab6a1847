// The ibverbs transport (see ib_transport.hpp): setup through the Store, the completion queue
// every connection shares, blocking waits on its completion channel, liveness probes, abort.
#include "transport/ibverbs/ib_transport.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "core/errors.hpp"
#include "core/log.hpp"
#include "core/params.hpp"
#include "bootstrap/store.hpp"
#include "transport/ibverbs/ib_connection.hpp"
#include "transport/ibverbs/ib_device.hpp"
#include "transport/ibverbs/ib_memory.hpp"
#include "transport/ibverbs/ib_queue_pair.hpp"

namespace tiercc {

namespace {

using namespace ib;
using std::chrono::milliseconds;

constexpr int kSpinPolls = 64;                     // CQ polls before sleeping on the channel
constexpr milliseconds kSleepSlice{200};           // re-check probes and deadlines this often
constexpr milliseconds kProbeAfter{1000};          // silence with pending input before probing
constexpr milliseconds kDrainAtClose{2000};        // let posted sends reach the peer before closing
constexpr std::uint32_t kInfoMagic = 0x49424e54;   // "TNBI"
constexpr std::uint8_t kSoftRoceTimeout = 16;      // ack timeout exponent on rdma_rxe: 4.096 us x 2^16 = 268 ms
// A peer connected on first use: the store is asked for its records after 0.25, 0.5, 1, ... ms,
// at most every kDialLookCap, each answer bounded by kStoreAnswer.
constexpr std::chrono::microseconds kDialFirstLook{250};
constexpr milliseconds kDialLookCap{16};
constexpr milliseconds kStoreAnswer{5000};

// What a rank publishes for each peer: its QP address and the protocol sizes both must share.
struct PeerInfo {
  std::uint32_t magic = kInfoMagic;
  std::uint32_t credits = 0;
  std::uint64_t eagerLimit = 0;
  QpAddress qp;
};

std::string qpKey(int from, int to) { return concat("net/", from, "/qp/", to); }
// Init connects its peers and then raises one mark for all of them; a peer connected later has
// a mark per pair.
std::string readyKey(int rank) { return concat("net/", rank, "/ready"); }
std::string readyKey(int from, int to) { return concat("net/", from, "/ready/", to); }

std::int64_t intParam(const char* name, std::int64_t lo, std::int64_t hi) {
  std::int64_t v = params::getInt(name);
  TIERCC_REQUIRE_ARG(v >= lo && v <= hi, name, " must be in ", lo, "..", hi, ", got ", v);
  return v;
}

// Owns a file descriptor (the abort eventfd), also when the constructor throws half way.
struct FdHolder {
  int fd = -1;
  ~FdHolder() {
    if (fd >= 0) ::close(fd);
  }
};

class IbTransport final : public Transport {
 public:
  IbTransport(Store& store, const TransportSetup& setup);
  ~IbTransport() override;

  const char* name() const override { return "ibverbs"; }
  std::string endpoint() const override { return choice_.describe(); }
  void isend(TransferOp& op) override;
  void irecv(TransferOp& op) override;
  std::shared_ptr<MemoryRegion> registerMemory(void* buf, std::size_t len) override;
  void invalidateMemory(void* buf, std::size_t len) override;
  void iwrite(WriteOp& op) override;
  void inotify(TransferOp& op) override;
  void wait(const std::vector<TransferOp*>& ops, Deadline deadline, const std::string& what) override;
  bool test(TransferOp& op, const std::string& what) override;
  void abort() override;

  IbverbsCacheStats cacheStats();

 private:
  Connection& connection(int peer, const char* op);
  void connectAtInit(Store& store, const TransportSetup& setup);
  Connection& addConnection(int peer, Store& store, std::uint32_t psn);
  Bytes addressRecord(const Connection& c, std::uint32_t psn) const;
  PeerInfo parseAddress(const Bytes& bytes, const Connection& c) const;
  Connection& dial(int peer);
  void advanceDials();
  void pollCq();
  void progressLocked();
  void probeSilentPeers();
  void throwIfFailed(const TransferOp& op, const std::string& what);
  [[noreturn]] void timedOut(const std::vector<TransferOp*>& ops, const std::string& what);
  void sleepLocked(std::unique_lock<std::mutex>& lock, Deadline deadline);
  void drainLocked(milliseconds limit);

  DeviceChoice choice_;
  ContextPtr ctx_;
  PdPtr pd_;
  ChannelPtr channel_;
  CqPtr cq_;
  unsigned unackedEvents_ = 0;
  std::unique_ptr<RegistrationCache> cache_;
  Shared shared_;
  std::vector<std::unique_ptr<Connection>> conns_;
  std::map<int, Connection*> byPeer_;
  int rank_ = 0;
  std::function<std::string(int)> peerName_;
  QpTuning tuning_;
  std::mt19937 rng_{std::random_device{}()};
  // Peers connected on first use: where they publish, who may be one, and the handshakes under
  // way (progress advances them through the store; nothing blocks on a peer not yet calling).
  std::shared_ptr<Store> laterStore_;
  std::vector<bool> addressable_;
  struct Dial {
    std::uint32_t psn = 0;   // our first packet number
    bool connected = false;  // the peer's address came and our queue pair is connected to it
    std::chrono::steady_clock::time_point nextLook;
    std::chrono::microseconds every = kDialFirstLook;
  };
  std::map<int, Dial> dials_;
  std::mutex mutex_;  // abort() and registration may come from other threads than progress
  std::uint64_t completions_ = 0;
  FdHolder wake_;     // eventfd: abort() wakes a rank sleeping in poll
  std::atomic<bool> aborted_{false};
};

IbTransport::IbTransport(Store& store, const TransportSetup& setup)
    : rank_(setup.rank),
      peerName_(setup.peerName),
      laterStore_(setup.laterStore),
      addressable_(static_cast<std::size_t>(std::max(setup.worldSize, 0)), false) {
  for (int peer : setup.peers)
    if (peer >= 0 && peer < setup.worldSize) addressable_[static_cast<std::size_t>(peer)] = true;
  wake_.fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_.fd < 0) failErrno("eventfd");
  ctx_ = openChosenDevice(choice_, setup.localRank);
  pd_.reset(ibv_alloc_pd(ctx_.get()));
  if (!pd_) failErrno("ibv_alloc_pd on " + choice_.device);
  probeLoopback(ctx_.get(), pd_.get(), choice_);

  shared_.pd = pd_.get();
  shared_.credits = static_cast<std::uint32_t>(intParam("TIERCC_IB_CREDITS", 2, 4096));
  shared_.eagerLimit = static_cast<std::size_t>(intParam("TIERCC_IB_EAGER_LIMIT", 0, 1 << 20));
  shared_.maxChunk = std::min<std::size_t>(choice_.maxMsgSize, std::size_t(1) << 30);
  cache_ = std::make_unique<RegistrationCache>(pd_.get(), static_cast<std::size_t>(intParam("TIERCC_IB_MR_CACHE", 1, 1 << 20)));
  shared_.cache = cache_.get();

  channel_.reset(ibv_create_comp_channel(ctx_.get()));
  if (!channel_) failErrno("ibv_create_comp_channel");
  int flags = fcntl(channel_->fd, F_GETFL);
  fcntl(channel_->fd, F_SETFL, flags | O_NONBLOCK);
  ibv_device_attr dev{};
  if (ibv_query_device(ctx_.get(), &dev) != 0) failErrno("ibv_query_device");
  std::size_t perPeer = 2 * (shared_.credits + kSlack) + 160;
  int cqe = static_cast<int>(std::min<std::size_t>(perPeer * std::max<std::size_t>(setup.peers.size(), 1) + 16,
                                                   static_cast<std::size_t>(dev.max_cqe)));
  cq_.reset(ibv_create_cq(ctx_.get(), cqe, nullptr, channel_.get(), 0));
  if (!cq_) failErrno("ibv_create_cq");
  connectAtInit(store, setup);
  TIERCC_LOG(Info, Net) << "ibverbs transport on " << choice_.describe() << " connected to " << conns_.size()
                        << " peer(s)" << (laterStore_ ? "; the others connect on first use" : "") << "; eager up to "
                        << shared_.eagerLimit << " bytes, " << shared_.credits << " credits";
}

// The peers of init (every peer without a store for later ones; with one, the rails: a peer
// must list this rank too) are connected before init returns; the others on first use (dial).
void IbTransport::connectAtInit(Store& store, const TransportSetup& setup) {
  tuning_ = tuningFromParams();
  if (isSoftRoce(ctx_.get())) {
    if (tuning_.retryCnt == 7) {
      // rdma_rxe never gives up with retry_cnt 7, so a dead peer would hang us: one try fewer.
      tuning_.retryCnt = 6;
      TIERCC_LOG(Info, Net) << "ibverbs: " << choice_.device << " is SoftRoCE; using retry_cnt 6 instead of 7";
    }
    if (params::source("TIERCC_IB_TIMEOUT") == "default") {
      // rdma_rxe acks in software: a loaded host (CI's VM: two 64 MiB writes crossing) left a
      // transfer seven 67 ms timeouts without an ack, and the QP failed with "retry counter
      // exceeded". A try of 268 ms still reports a dead peer within 2 s.
      tuning_.timeout = kSoftRoceTimeout;
      TIERCC_LOG(Info, Net) << "ibverbs: " << choice_.device << " is SoftRoCE; using ack timeout exponent "
                            << int(kSoftRoceTimeout) << " (TIERCC_IB_TIMEOUT unset)";
    }
  }
  const std::vector<int>& atInit = laterStore_ ? setup.connectAtInit : setup.peers;
  std::vector<std::uint32_t> psns;
  for (int peer : atInit) {
    TIERCC_REQUIRE_ARG(peer >= 0 && peer < setup.worldSize && addressable_[static_cast<std::size_t>(peer)],
                       "ibverbs transport: init peer ", peer, " is not among the peers");
    psns.push_back(rng_() & 0xffffff);
    addConnection(peer, store, psns.back());
  }
  for (std::size_t i = 0; i < conns_.size(); ++i) {
    Connection& c = *conns_[i];
    const PeerInfo info = parseAddress(store.get(qpKey(c.peer(), rank_), setup.deadline), c);
    c.connect(choice_, psns[i], info.qp, tuning_);
  }
  // Nobody sends before its peer's receives are posted and its queue pair is ready.
  store.setString(readyKey(rank_), "1");
  std::vector<std::string> keys;
  for (int peer : atInit) keys.push_back(readyKey(peer));
  store.wait(keys, setup.deadline);
  for (auto& c : conns_) c->open();
}

// A connection with its queue pair made and its address published for the peer.
Connection& IbTransport::addConnection(int peer, Store& store, std::uint32_t psn) {
  std::string name = peerName_ ? peerName_(peer) : concat("rank ", peer);
  auto conn = std::make_unique<Connection>(shared_, static_cast<std::uint32_t>(conns_.size()), peer, name);
  conn->create(cq_.get());
  store.set(qpKey(rank_, peer), addressRecord(*conn, psn));
  Connection& c = *conn;
  byPeer_[peer] = &c;
  conns_.push_back(std::move(conn));
  return c;
}

Bytes IbTransport::addressRecord(const Connection& c, std::uint32_t psn) const {
  PeerInfo info;
  info.credits = shared_.credits;
  info.eagerLimit = shared_.eagerLimit;
  info.qp = localAddress(c.qp(), choice_, psn);
  Bytes bytes(sizeof(info));
  std::memcpy(bytes.data(), &info, sizeof(info));
  return bytes;
}

PeerInfo IbTransport::parseAddress(const Bytes& bytes, const Connection& c) const {
  PeerInfo info;
  if (bytes.size() != sizeof(info))
    fail(ErrorCode::TransportError, "ibverbs setup: bad address record from ", c.name());
  std::memcpy(&info, bytes.data(), sizeof(info));
  if (info.magic != kInfoMagic) fail(ErrorCode::TransportError, "ibverbs setup: bad address record from ", c.name());
  if (info.credits != shared_.credits || info.eagerLimit != shared_.eagerLimit)
    fail(ErrorCode::InvalidArgument, "ibverbs setup: TIERCC_IB_CREDITS/TIERCC_IB_EAGER_LIMIT are ", info.credits, "/",
         info.eagerLimit, " on ", c.name(), " but ", shared_.credits, "/", shared_.eagerLimit,
         " here; set them alike on all ranks");
  return info;
}

// A peer's first operation: its queue pair is made and published now, and the operation queues
// in the connection; progress connects it once the peer's address is in the store (the peer's
// own first operation with this rank publishes it) and opens it once the peer's ready mark is.
Connection& IbTransport::dial(int peer) {
  Dial d;
  d.psn = rng_() & 0xffffff;
  d.nextLook = std::chrono::steady_clock::now() + kDialFirstLook;
  Connection& c = addConnection(peer, *laterStore_, d.psn);
  dials_[peer] = d;
  TIERCC_LOG(Trace, Net) << "ibverbs: connecting to " << c.name() << " on first use";
  return c;
}

// Runs under mutex_, as all progress: its few store requests per handshake (each answered in
// well under a millisecond by a live store, at most kStoreAnswer) hold the transport meanwhile.
void IbTransport::advanceDials() {
  const auto now = std::chrono::steady_clock::now();
  for (auto it = dials_.begin(); it != dials_.end();) {
    const int peer = it->first;
    Dial& d = it->second;
    Connection& c = *byPeer_.at(peer);
    if (c.failed()) {
      it = dials_.erase(it);
      continue;
    }
    if (now < d.nextLook) {
      ++it;
      continue;
    }
    try {
      if (!d.connected && laterStore_->check({qpKey(peer, rank_)})) {
        const PeerInfo info = parseAddress(laterStore_->get(qpKey(peer, rank_), Deadline::after(kStoreAnswer)), c);
        c.connect(choice_, d.psn, info.qp, tuning_);
        laterStore_->setString(readyKey(rank_, peer), "1");
        d.connected = true;
      }
      if (d.connected && laterStore_->check({readyKey(peer, rank_)})) {
        c.open();
        TIERCC_LOG(Trace, Net) << "ibverbs: connected to " << c.name() << " on first use";
        it = dials_.erase(it);
        continue;
      }
    } catch (const Error& e) {
      // The operations with this peer fail with it; the others go on.
      c.poison(e.code(), concat("connecting to ", c.name(), " on first use: ", e.what()));
      it = dials_.erase(it);
      continue;
    }
    d.nextLook = now + d.every;
    d.every = std::min<std::chrono::microseconds>(d.every * 2, kDialLookCap);
    ++it;
  }
}

IbTransport::~IbTransport() {
  try {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!aborted_.load()) {
      // Eager sends complete when copied out: let them reach the peer, then say goodbye so a
      // peer still waiting on us fails now, as with a closed TCP connection.
      drainLocked(kDrainAtClose);
      for (auto& c : conns_) c->sayGoodbye();
      drainLocked(milliseconds(500));
    }
  } catch (const std::exception& e) {
    TIERCC_LOG(Warn, Net) << "ibverbs transport teardown: " << e.what();
  }
  conns_.clear();
  cache_.reset();
  if (unackedEvents_) ibv_ack_cq_events(cq_.get(), unackedEvents_);
  cq_.reset();
  channel_.reset();
  pd_.reset();
  ctx_.reset();
}

Connection& IbTransport::connection(int peer, const char* op) {
  if (aborted_.load()) fail(ErrorCode::Aborted, "ibverbs transport: ", op, " after abort");
  auto it = byPeer_.find(peer);
  if (it == byPeer_.end()) {
    const bool addressable = peer >= 0 && static_cast<std::size_t>(peer) < addressable_.size() &&
                             addressable_[static_cast<std::size_t>(peer)];
    if (!laterStore_ || !addressable)
      fail(ErrorCode::InvalidArgument, "ibverbs transport: ", op, " with rank ", peer,
           ", which is not a connected peer");
    return dial(peer);
  }
  if (it->second->failed()) fail(it->second->errorCode(), it->second->error());
  return *it->second;
}

void IbTransport::isend(TransferOp& op) {
  std::lock_guard<std::mutex> lock(mutex_);
  connection(op.peer, "isend").isend(op);
}

void IbTransport::irecv(TransferOp& op) {
  std::lock_guard<std::mutex> lock(mutex_);
  connection(op.peer, "irecv").irecv(op);
}

std::shared_ptr<MemoryRegion> IbTransport::registerMemory(void* buf, std::size_t len) {
  TIERCC_REQUIRE_ARG(buf || len == 0, "registerMemory: null buffer");
  return cache_->acquire(buf, len);
}

void IbTransport::invalidateMemory(void* buf, std::size_t len) { cache_->invalidate(buf, len); }

void IbTransport::iwrite(WriteOp& op) {
  RemoteRegion remote;
  TIERCC_REQUIRE_ARG(RemoteRegion::parse(op.remote, remote), "iwrite: remote descriptor of ", op.remote.size(),
                     " bytes is not an ibverbs region descriptor");
  TIERCC_REQUIRE_ARG(op.remoteOffset <= remote.len && op.len <= remote.len - op.remoteOffset, "iwrite: ", op.len,
                     " bytes at offset ", op.remoteOffset, " exceed the remote region of ", remote.len, " bytes");
  if (op.len > shared_.maxChunk)
    fail(ErrorCode::NotSupported, "iwrite: ", op.len, " bytes exceed the largest RDMA write of ", choice_.device, " (",
         shared_.maxChunk, " bytes)");
  std::lock_guard<std::mutex> lock(mutex_);
  connection(op.peer, "iwrite").iwrite(op, remote);
}

void IbTransport::inotify(TransferOp& op) {
  std::lock_guard<std::mutex> lock(mutex_);
  connection(op.peer, "inotify").inotify(op);
}

void IbTransport::pollCq() {
  ibv_wc wcs[32];
  while (true) {
    int n = ibv_poll_cq(cq_.get(), 32, wcs);
    if (n < 0) fail(ErrorCode::TransportError, "ibv_poll_cq failed on ", choice_.device);
    for (int i = 0; i < n; ++i) {
      std::size_t idx = (wcs[i].wr_id & ~kRecvBit) >> 32;
      if (idx < conns_.size()) conns_[idx]->onCompletion(wcs[i]);
    }
    completions_ += static_cast<std::uint64_t>(n);
    if (n < 32) return;
  }
}

void IbTransport::progressLocked() {
  if (!dials_.empty()) advanceDials();
  pollCq();
  for (auto& c : conns_) c->pump();
}

// A peer that died sends nothing, so a rank waiting only to receive would never learn of it:
// after a silence, a zero-byte write finds out (it fails after the QP's retries).
void IbTransport::probeSilentPeers() {
  auto now = std::chrono::steady_clock::now();
  for (auto& c : conns_)
    if (!c->failed() && c->expectsInput() && !c->probing() && now - c->lastHeard() > kProbeAfter) c->probe();
}

void IbTransport::throwIfFailed(const TransferOp& op, const std::string& what) {
  if (op.complete) return;
  auto it = byPeer_.find(op.peer);
  if (it != byPeer_.end() && it->second->failed()) fail(it->second->errorCode(), what, ": ", it->second->error());
}

void IbTransport::timedOut(const std::vector<TransferOp*>& ops, const std::string& what) {
  for (TransferOp* op : ops) {
    if (op->complete) continue;
    Connection& c = *byPeer_.at(op->peer);
    std::string detail = c.describePending(*op);
    std::size_t pending = 0;
    for (TransferOp* o : ops) pending += o->complete ? 0 : 1;
    // The peer may still write into our buffers later: the connection can't be trusted now.
    c.poison(ErrorCode::Timeout, concat("an earlier operation with ", c.name(), " timed out; the connection is unusable"));
    fail(ErrorCode::Timeout, what, ": timed out on the scale-out tier (ibverbs) ", detail, " (", pending,
         " operation(s) pending)");
  }
  fail(ErrorCode::Internal, what, ": timed out with nothing pending");
}

void IbTransport::sleepLocked(std::unique_lock<std::mutex>& lock, Deadline deadline) {
  ibv_req_notify_cq(cq_.get(), 0);
  // A completion that arrived before arming raises no event: look once more before sleeping.
  std::uint64_t before = completions_;
  progressLocked();
  if (completions_ != before) return;
  pollfd fds[2] = {{channel_->fd, POLLIN, 0}, {wake_.fd, POLLIN, 0}};
  // A handshake under way is looked at again soon: the store does not wake us.
  const milliseconds slice = dials_.empty() ? kSleepSlice : milliseconds(1);
  int ms = static_cast<int>(std::min(deadline.remaining(), slice).count());
  lock.unlock();
  ::poll(fds, 2, std::max(ms, 1));
  lock.lock();
  ibv_cq* evCq = nullptr;
  void* evCtx = nullptr;
  while (ibv_get_cq_event(channel_.get(), &evCq, &evCtx) == 0) ++unackedEvents_;
  if (unackedEvents_ >= 64) {
    ibv_ack_cq_events(cq_.get(), unackedEvents_);
    unackedEvents_ = 0;
  }
}

void IbTransport::wait(const std::vector<TransferOp*>& ops, Deadline deadline, const std::string& what) {
  std::unique_lock<std::mutex> lock(mutex_);
  int idle = 0;
  while (true) {
    if (aborted_.load()) fail(ErrorCode::Aborted, what, ": communicator aborted");
    std::uint64_t before = completions_;
    progressLocked();
    bool allDone = true;
    for (TransferOp* op : ops) {
      throwIfFailed(*op, what);
      allDone = allDone && op->complete;
    }
    if (allDone) return;
    if (deadline.expired()) timedOut(ops, what);
    probeSilentPeers();
    if (completions_ != before) idle = 0;
    if (++idle < kSpinPolls) continue;
    sleepLocked(lock, deadline);
    idle = 0;
  }
}

bool IbTransport::test(TransferOp& op, const std::string& what) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (aborted_.load()) fail(ErrorCode::Aborted, what, ": communicator aborted");
  progressLocked();
  probeSilentPeers();
  throwIfFailed(op, what);
  return op.complete;
}

// Bounded: at teardown a dead peer must not hold us for longer than `limit`.
void IbTransport::drainLocked(milliseconds limit) {
  auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    progressLocked();
    bool drained = true;
    for (auto& c : conns_) drained = drained && (c->failed() || c->drained());
    if (drained) return;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

void IbTransport::abort() {
  if (aborted_.exchange(true)) return;
  std::uint64_t one = 1;
  ssize_t ignored = ::write(wake_.fd, &one, sizeof(one));
  (void)ignored;
  std::lock_guard<std::mutex> lock(mutex_);
  try {
    // Peers waiting on us hear of it now rather than at their deadline.
    for (auto& c : conns_) c->sayGoodbye();
    drainLocked(milliseconds(200));
  } catch (const std::exception& e) {
    TIERCC_LOG(Warn, Net) << "ibverbs abort: " << e.what();
  }
  for (auto& c : conns_) c->poison(ErrorCode::Aborted, "the communicator was aborted");
}

IbverbsCacheStats IbTransport::cacheStats() {
  RegistrationCache::Counters c = cache_->counters();
  return {c.hits, c.misses, c.evictions, c.entries};
}

}  // namespace

std::optional<std::string> ibverbsUnavailable() { return whyUnavailable(); }

std::unique_ptr<Transport> createIbverbsTransport(Store& store, const TransportSetup& setup) {
  return std::make_unique<IbTransport>(store, setup);
}

IbverbsCacheStats ibverbsCacheStats(Transport& t) {
  auto* ib = dynamic_cast<IbTransport*>(&t);
  TIERCC_REQUIRE_ARG(ib != nullptr, "ibverbsCacheStats: not an ibverbs transport");
  return ib->cacheStats();
}

}  // namespace tiercc
