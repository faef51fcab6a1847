// The TCP transport (see tcp_transport.hpp): connection setup through the Store, the
// registration table for one-sided writes, and the poll(2) loop that drives every connection.
#include "transport/tcp/tcp_transport.hpp"

#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
// <utility> before Asio: Boost 1.74's awaitable.hpp needs std::exchange under C++20.
// clang-format off
#include <utility>
#include <boost/asio.hpp>
// clang-format on

#include "bootstrap/store.hpp"
#include "core/errors.hpp"
#include "core/log.hpp"
#include "core/params.hpp"
#include "transport/nic_choice.hpp"
#include "transport/tcp/tcp_connection.hpp"
#include "transport/tcp/tcp_handshake.hpp"

namespace tiercc {

namespace asio = boost::asio;
using asio::ip::tcp;
using tcpnet::Connection;

namespace {

constexpr auto kPollSlice = std::chrono::milliseconds(100);

// A registered range. TCP needs no pinning: the id lets an incoming write find the memory.
class TcpRegion final : public MemoryRegion {
 public:
  TcpRegion(std::uint64_t id, std::byte* data, std::size_t size) : id_(id), data_(data), size_(size) {}
  std::byte* data() const override { return data_; }
  std::size_t size() const override { return size_; }
  Bytes descriptor() const override {
    Bytes out(16);
    std::uint64_t fields[2] = {id_, size_};
    std::memcpy(out.data(), fields, 16);
    return out;
  }
  std::uint64_t id() const { return id_; }

 private:
  std::uint64_t id_;
  std::byte* data_;
  std::size_t size_;
};

class TcpTransport final : public Transport, private tcpnet::RegionTable {
 public:
  TcpTransport(Store& store, const TransportSetup& setup);
  ~TcpTransport() override;

  const char* name() const override { return "tcp"; }
  std::string endpoint() const override { return endpoint_; }
  // Two fragments' messages on one rail: larger ones queue ahead of the other direction's
  // acknowledgements (bench/two-tier-net-bench.sh, docs/performance.md).
  std::size_t preferredMessageBytes() const override { return 256 << 10; }
  void isend(TransferOp& op) override;
  void irecv(TransferOp& op) override;
  std::shared_ptr<MemoryRegion> registerMemory(void* buf, std::size_t len) override;
  void invalidateMemory(void* buf, std::size_t len) override;
  void iwrite(WriteOp& op) override;
  void inotify(TransferOp& op) override;
  void wait(const std::vector<TransferOp*>& ops, Deadline deadline, const std::string& what) override;
  bool test(TransferOp& op, const std::string& what) override;
  void abort() override;

 private:
  std::byte* resolve(std::uint64_t id, std::uint64_t offset, std::uint64_t len) override;
  Connection& connection(int peer, const char* op);
  Connection& connectionEntry(int peer);
  void connectAtInit(Store& store, const TransportSetup& setup);
  void dial(int peer, Store& store, Deadline deadline);
  void progressHandshakes();
  void progressAll();
  void throwIfFailed(const TransferOp& op, const std::string& what);
  void sleepUntilReady(Deadline deadline);

  asio::io_context io_;
  const int rank_;
  std::function<std::string(int)> peerName_;
  std::shared_ptr<Store> laterStore_;       // null: every peer connected at init
  std::chrono::milliseconds laterTimeout_;  // a later peer's address must be in the store this soon
  std::vector<bool> addressable_;           // rank -> may be addressed
  std::unique_ptr<tcpnet::Handshakes> handshakes_;
  std::mutex socketsMutex_;          // the handshakes and new sockets, against abort()
  std::map<int, Connection> conns_;  // peers addressed so far
  std::mutex regionsMutex_;  // registration may come from another thread than progress
  std::map<std::uint64_t, std::weak_ptr<TcpRegion>> regions_;
  std::uint64_t nextRegion_ = 1;
  int wakeFd_ = -1;  // eventfd: abort() wakes a rank sleeping in poll
  std::string endpoint_;  // "198.18.1.1:40123 (rail1, TIERCC_SOCKET_IFNAME=rail* for local rank 1)"
  std::atomic<bool> aborted_{false};
};

TcpTransport::TcpTransport(Store& store, const TransportSetup& setup)
    : rank_(setup.rank),
      peerName_(setup.peerName),
      laterStore_(setup.laterStore),
      laterTimeout_(std::chrono::duration_cast<std::chrono::milliseconds>(setup.deadline.remaining())),
      addressable_(static_cast<std::size_t>(setup.worldSize), false) {
  wakeFd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wakeFd_ < 0) failErrno("eventfd");
  for (int peer : setup.peers) addressable_.at(static_cast<std::size_t>(peer)) = true;
  std::string why;
  const std::string address = tcpListenAddress(setup.localRank, setup.spansHosts, why);
  boost::system::error_code ec;
  auto addr = asio::ip::make_address(address, ec);
  if (ec) fail(ErrorCode::InvalidArgument, "TIERCC_SOCKET_IFADDR='", address, "' is not an IP address");
  tcp::acceptor acceptor(io_);
  tcp::endpoint ep(addr, 0);
  acceptor.open(ep.protocol(), ec);
  if (!ec) acceptor.bind(ep, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) fail(ErrorCode::SystemError, "scale-out listener on ", address, ": ", ec.message());
  auto local = acceptor.local_endpoint();
  std::string host = local.address().to_string();
  if (local.address().is_v6()) host = "[" + host + "]";
  store.setString("net/" + std::to_string(setup.rank), host + ":" + std::to_string(local.port()));
  endpoint_ = concat(host, ":", local.port(), " (", why, ")");
  handshakes_ = std::make_unique<tcpnet::Handshakes>(io_, std::move(acceptor), setup.rank, setup.worldSize);
  TIERCC_LOG(Info, Net) << "tcp transport listens on " << endpoint_;
  connectAtInit(store, setup);
}

// Every rank is in init together: the lower rank of each pair dials and the higher one accepts,
// one connect per pair. Peers connected later may dial from either side (tcp_handshake.hpp).
void TcpTransport::connectAtInit(Store& store, const TransportSetup& setup) {
  const std::vector<int>& atInit = laterStore_ ? setup.connectAtInit : setup.peers;
  std::vector<int> waiting;
  for (int peer : atInit) {
    {
      std::lock_guard<std::mutex> lock(socketsMutex_);
      connectionEntry(peer);
    }
    if (peer > rank_) dial(peer, store, setup.deadline);
    waiting.push_back(peer);
  }
  while (true) {
    progressHandshakes();
    std::size_t settled = 0;
    for (int peer : waiting) {
      const Connection& c = conns_.at(peer);
      if (!c.error.empty()) fail(c.errorCode, "scale-out setup: ", c.error);
      settled += c.socket ? 1 : 0;
    }
    if (settled == waiting.size()) break;
    if (setup.deadline.expired())
      fail(ErrorCode::Timeout, "scale-out setup: timed out connecting to ", waiting.size() - settled, " of ",
           waiting.size(), " peer(s)");
    sleepUntilReady(setup.deadline);
  }
  TIERCC_LOG(Info, Net) << "tcp transport connected to " << waiting.size() << " peer(s) at init"
                        << (laterStore_ ? "; the others connect on first use" : "");
}

void TcpTransport::dial(int peer, Store& store, Deadline deadline) {
  std::string host;
  std::uint16_t port = 0;
  parseHostPort(store.getString("net/" + std::to_string(peer), deadline), host, port);
  std::lock_guard<std::mutex> lock(socketsMutex_);
  handshakes_->dial(peer, tcp::endpoint(asio::ip::make_address(host), port), conns_.at(peer).name);
}

// Installs the sockets the handshakes settled on; a failed dial poisons its connection.
void TcpTransport::progressHandshakes() {
  std::lock_guard<std::mutex> lock(socketsMutex_);
  if (aborted_.load()) return;
  for (auto& outcome : handshakes_->progress()) {
    Connection& c = connectionEntry(outcome.peer);
    if (outcome.socket) {
      c.socket = std::move(outcome.socket);
      TIERCC_LOG(Trace, Net) << "tcp: connected to " << c.name;
    } else {
      c.poison(outcome.code, outcome.error);
    }
  }
}

TcpTransport::~TcpTransport() {
  if (wakeFd_ >= 0) ::close(wakeFd_);
}

// Callers hold socketsMutex_: abort() walks the map from any thread.
Connection& TcpTransport::connectionEntry(int peer) {
  auto [it, added] = conns_.try_emplace(peer);
  if (added) {
    it->second.peer = peer;
    it->second.name = peerName_ ? peerName_(peer) : concat("rank ", peer);
  }
  return it->second;
}

// The connection an operation with `peer` goes on; the first operation dials a peer that is not
// connected yet (its messages queue until the handshake settles).
Connection& TcpTransport::connection(int peer, const char* op) {
  if (peer < 0 || static_cast<std::size_t>(peer) >= addressable_.size() ||
      !addressable_[static_cast<std::size_t>(peer)])
    fail(ErrorCode::InvalidArgument, "tcp transport: ", op, " with rank ", peer,
         ", which is not a peer of this transport");
  Connection* c = nullptr;
  bool needsDial = false;
  {
    std::lock_guard<std::mutex> lock(socketsMutex_);
    c = &connectionEntry(peer);
    needsDial = !c->socket && laterStore_ && !handshakes_->settled(peer) && !handshakes_->dialing(peer);
  }
  if (!c->error.empty()) fail(c->errorCode, c->error);
  if (needsDial) dial(peer, *laterStore_, Deadline::after(laterTimeout_));
  return *c;
}

void TcpTransport::isend(TransferOp& op) {
  Connection& c = connection(op.peer, "isend");
  op.doneBytes = 0;
  op.complete = false;
  c.sends.push_back({&op, {tcpnet::kMagic, tcpnet::Kind::Send, op.tag, op.len, 0, 0}});
}

void TcpTransport::irecv(TransferOp& op) {
  Connection& c = connection(op.peer, "irecv");
  op.doneBytes = 0;
  op.complete = false;
  c.recvs.push_back(&op);
}

std::shared_ptr<MemoryRegion> TcpTransport::registerMemory(void* buf, std::size_t len) {
  TIERCC_REQUIRE_ARG(buf || len == 0, "registerMemory: null buffer");
  auto* p = static_cast<std::byte*>(buf);
  std::lock_guard<std::mutex> lock(regionsMutex_);
  for (auto it = regions_.begin(); it != regions_.end();) {
    auto live = it->second.lock();
    if (!live) {
      it = regions_.erase(it);
      continue;
    }
    if (live->data() <= p && p + len <= live->data() + live->size()) return live;  // cache hit
    ++it;
  }
  auto region = std::make_shared<TcpRegion>(nextRegion_++, p, len);
  regions_[region->id()] = region;
  return region;
}

void TcpTransport::invalidateMemory(void* buf, std::size_t len) {
  auto* p = static_cast<std::byte*>(buf);
  std::lock_guard<std::mutex> lock(regionsMutex_);
  for (auto it = regions_.begin(); it != regions_.end();) {
    auto live = it->second.lock();
    bool overlaps = live && live->data() < p + len && p < live->data() + live->size();
    it = (!live || overlaps) ? regions_.erase(it) : std::next(it);
  }
}

std::byte* TcpTransport::resolve(std::uint64_t id, std::uint64_t offset, std::uint64_t len) {
  std::lock_guard<std::mutex> lock(regionsMutex_);
  auto it = regions_.find(id);
  if (it == regions_.end()) return nullptr;
  auto live = it->second.lock();
  if (!live || !tcpnet::fitsInRegion(offset, len, live->size())) return nullptr;
  return live->data() + offset;
}

void TcpTransport::iwrite(WriteOp& op) {
  Connection& c = connection(op.peer, "iwrite");
  std::uint64_t fields[2] = {0, 0};
  TIERCC_REQUIRE_ARG(op.remote.size() == sizeof(fields), "iwrite: remote descriptor of ", op.remote.size(),
                     " bytes is not a tcp region descriptor");
  std::memcpy(fields, op.remote.data(), sizeof(fields));
  TIERCC_REQUIRE_ARG(op.remoteOffset <= fields[1] && op.len <= fields[1] - op.remoteOffset, "iwrite: ", op.len,
                     " bytes at offset ", op.remoteOffset, " exceed the remote region of ", fields[1], " bytes");
  op.doneBytes = 0;
  op.complete = false;
  c.sends.push_back({&op, {tcpnet::kMagic, tcpnet::Kind::Write, op.imm, op.len, fields[0], op.remoteOffset}});
}

void TcpTransport::inotify(TransferOp& op) {
  Connection& c = connection(op.peer, "inotify");
  op.complete = false;
  c.notifies.push_back(&op);
}

void TcpTransport::progressAll() {
  progressHandshakes();
  for (auto& [peer, c] : conns_)
    if (c.socket) c.progress(*this);
}

void TcpTransport::throwIfFailed(const TransferOp& op, const std::string& what) {
  if (op.complete) return;
  // abort() shuts our sockets down: the faults that follow are ours, not the peer's.
  if (aborted_.load()) fail(ErrorCode::Aborted, what, ": communicator aborted");
  Connection& c = conns_.at(op.peer);
  if (!c.error.empty()) fail(c.errorCode, what, ": ", c.error);
}

bool TcpTransport::test(TransferOp& op, const std::string& what) {
  if (aborted_.load()) fail(ErrorCode::Aborted, what, ": communicator aborted");
  progressAll();
  throwIfFailed(op, what);
  return op.complete;
}

// Sleeps in poll(2) until a socket with pending work is ready, abort() is called, or a slice passes.
void TcpTransport::sleepUntilReady(Deadline deadline) {
  std::vector<pollfd> fds;
  for (auto& [peer, c] : conns_) {
    if (!c.error.empty() || !c.socket || c.idle()) continue;
    // Reading is useful unless a whole message header waits for a receive nobody posted yet:
    // polling for input then would wake at once, forever.
    bool stalled = c.rxHeaderBytes == sizeof(tcpnet::WireHeader) && c.rx.kind == tcpnet::Kind::Send && c.recvs.empty();
    short ev = static_cast<short>((c.sends.empty() ? 0 : POLLOUT) | (stalled ? 0 : POLLIN));
    fds.push_back({c.fd(), ev, 0});
  }
  {
    std::lock_guard<std::mutex> lock(socketsMutex_);
    handshakes_->addPollFds(fds);
  }
  fds.push_back({wakeFd_, POLLIN, 0});
  int ms = static_cast<int>(std::min(deadline.remaining(), std::chrono::milliseconds(kPollSlice)).count());
  ::poll(fds.data(), fds.size(), std::max(ms, 1));
}

void TcpTransport::wait(const std::vector<TransferOp*>& ops, Deadline deadline, const std::string& what) {
  while (true) {
    if (aborted_.load()) fail(ErrorCode::Aborted, what, ": communicator aborted");
    progressAll();
    bool allDone = true;
    for (TransferOp* op : ops) {
      throwIfFailed(*op, what);
      allDone = allDone && op->complete;
    }
    if (allDone) return;
    if (deadline.expired()) {
      for (TransferOp* op : ops) {
        if (op->complete) continue;
        Connection& c = conns_.at(op->peer);
        std::string detail =
            concat(op->isSend ? "sending to " : "receiving from ", c.name, ", ", op->doneBytes, " of ", op->len,
                   " bytes moved", c.socket ? "" : " (not connected yet: the peer never answered this rank's dial)");
        // The peer may still send the rest: this connection's byte stream can't be trusted now.
        c.poison(ErrorCode::Timeout, concat("an earlier operation with ", c.name, " timed out; the connection is unusable"));
        fail(ErrorCode::Timeout, what, ": timed out on the scale-out tier (tcp) ", detail);
      }
    }
    sleepUntilReady(deadline);
  }
}

void TcpTransport::abort() {
  aborted_.store(true);
  // Peers waiting on us see the connection close at once rather than at their deadline.
  {
    std::lock_guard<std::mutex> lock(socketsMutex_);
    for (auto& [peer, c] : conns_)
      if (c.socket) ::shutdown(c.fd(), SHUT_RDWR);
    handshakes_->shutdownAll();
  }
  std::uint64_t one = 1;
  ssize_t ignored = ::write(wakeFd_, &one, sizeof(one));
  (void)ignored;
}

}  // namespace

std::unique_ptr<Transport> createTcpTransport(Store& store, const TransportSetup& setup) {
  return std::make_unique<TcpTransport>(store, setup);
}

}  // namespace tiercc
