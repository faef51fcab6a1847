// TCP scale-out backend (see tcp_transport.hpp). Wire format per message: a 24-byte header
// (magic, tag, length) and the payload. Receives match messages in order and check both the
// tag and the length, so a mismatched collective is caught instead of corrupting memory.
#include "transport/tcp/tcp_transport.hpp"

#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <utility>  // before Asio: Boost 1.74 awaitable.hpp needs std::exchange under C++20
#include <boost/asio.hpp>
#include <cstring>
#include <deque>
#include <map>

#include "core/errors.hpp"
#include "core/log.hpp"
#include "transport/bootstrap/store.hpp"

namespace tiercc {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {
constexpr std::uint32_t kMagic = 0x31434354;  // "TCC1"
constexpr auto kPollSlice = std::chrono::milliseconds(100);

struct WireHeader {
  std::uint32_t magic;
  std::uint32_t reserved;
  std::uint64_t tag;
  std::uint64_t len;
};
static_assert(sizeof(WireHeader) == 24);

struct Hello {
  std::uint32_t magic;
  std::int32_t rank;
};
}  // namespace

struct TcpListener::Impl {
  asio::io_context io;
  tcp::acceptor acceptor{io};
};

TcpListener::TcpListener(const std::string& address) : impl_(std::make_unique<Impl>()) {
  boost::system::error_code ec;
  auto addr = asio::ip::make_address(address, ec);
  if (ec) fail(ErrorCode::InvalidArgument, "TIERCC_SOCKET_IFADDR='", address, "' is not an IP address");
  tcp::endpoint ep(addr, 0);
  impl_->acceptor.open(ep.protocol(), ec);
  if (!ec) impl_->acceptor.bind(ep, ec);
  if (!ec) impl_->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) fail(ErrorCode::SystemError, "scale-out listener on ", address, ": ", ec.message());
}

TcpListener::~TcpListener() = default;

std::string TcpListener::endpoint() const {
  auto ep = impl_->acceptor.local_endpoint();
  return ep.address().to_string() + ":" + std::to_string(ep.port());
}

struct TcpTransport::Connection {
  int peer = -1;
  std::string name;
  std::unique_ptr<tcp::socket> socket;
  std::deque<TransferOp*> sends, recvs;
  WireHeader txHeader{}, rxHeader{};
  std::size_t rxHeaderBytes = 0;
  std::string error;  // non-empty once poisoned
  ErrorCode errorCode = ErrorCode::TransportError;
  int fd() const { return socket->native_handle(); }
};

struct TcpTransport::State {
  TcpTransportConfig config;
  asio::io_context io;
  std::map<int, Connection> conns;
  int wakeFd = -1;  // eventfd: abort() wakes a rank sleeping in poll
  std::atomic<bool> aborted{false};
};

namespace {

void setSocketOptions(tcp::socket& s) {
  s.set_option(tcp::no_delay(true));
  s.non_blocking(true);
}

// Waits until fd is readable/writable or the deadline passes.
bool pollOne(int fd, short events, Deadline deadline) {
  pollfd p{fd, events, 0};
  int ms = static_cast<int>(std::min<std::int64_t>(deadline.remaining().count(), 1000));
  return ::poll(&p, 1, ms) > 0;
}

void readExactly(tcp::socket& s, void* buf, std::size_t len, Deadline deadline, const std::string& who) {
  std::size_t got = 0;
  while (got < len) {
    ssize_t n = ::recv(s.native_handle(), static_cast<char*>(buf) + got, len - got, 0);
    if (n > 0) {
      got += static_cast<std::size_t>(n);
    } else if (n == 0) {
      fail(ErrorCode::PeerFailure, "scale-out setup: ", who, " closed the connection");
    } else if (errno == EAGAIN || errno == EINTR) {
      if (deadline.expired()) fail(ErrorCode::Timeout, "scale-out setup: timed out reading from ", who);
      pollOne(s.native_handle(), POLLIN, deadline);
    } else {
      failErrno("scale-out setup: recv from " + who);
    }
  }
}

}  // namespace

TcpTransport::TcpTransport(TcpListener& listener, TcpTransportConfig config) : state_(std::make_unique<State>()) {
  State& st = *state_;
  st.config = std::move(config);
  st.wakeFd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (st.wakeFd < 0) failErrno("eventfd");
  const int me = st.config.rank;
  int toAccept = 0;
  for (int peer : st.config.peers) {
    Connection& c = st.conns[peer];
    c.peer = peer;
    c.name = st.config.peerName(peer);
    if (peer < me) {
      ++toAccept;
      continue;
    }
    std::string host;
    std::uint16_t port = 0;
    parseHostPort(st.config.peerEndpoint(peer), host, port);
    c.socket = std::make_unique<tcp::socket>(st.io);
    boost::system::error_code ec;
    c.socket->connect(tcp::endpoint(asio::ip::make_address(host), port), ec);
    if (ec) fail(ErrorCode::TransportError, "scale-out setup: cannot connect to ", c.name, " at ", host, ":", port, ": ", ec.message());
    setSocketOptions(*c.socket);
    Hello hello{kMagic, me};
    asio::write(*c.socket, asio::buffer(&hello, sizeof(hello)), ec);  // small: fits the socket buffer
    if (ec) fail(ErrorCode::TransportError, "scale-out setup: hello to ", c.name, ": ", ec.message());
  }
  tcp::acceptor& acceptor = listener.impl_->acceptor;
  acceptor.non_blocking(true);
  while (toAccept > 0) {
    auto sock = std::make_unique<tcp::socket>(st.io);
    boost::system::error_code ec;
    acceptor.accept(*sock, ec);
    if (ec == asio::error::would_block || ec == asio::error::try_again) {
      if (st.config.setupDeadline.expired())
        fail(ErrorCode::Timeout, "scale-out setup: timed out waiting for ", toAccept, " lower-ranked peer(s) to connect");
      pollOne(acceptor.native_handle(), POLLIN, st.config.setupDeadline);
      continue;
    }
    if (ec) fail(ErrorCode::TransportError, "scale-out setup: accept: ", ec.message());
    setSocketOptions(*sock);
    Hello hello{};
    readExactly(*sock, &hello, sizeof(hello), st.config.setupDeadline, "an accepted connection");
    auto it = st.conns.find(hello.rank);
    if (hello.magic != kMagic || it == st.conns.end() || hello.rank >= me || it->second.socket)
      fail(ErrorCode::TransportError, "scale-out setup: unexpected hello (magic ", hello.magic, ", rank ", hello.rank, ")");
    it->second.socket = std::move(sock);
    --toAccept;
  }
  TIERCC_LOG(Info, Net) << "tcp transport connected to " << st.conns.size() << " peer(s)";
}

TcpTransport::~TcpTransport() {
  if (state_ && state_->wakeFd >= 0) ::close(state_->wakeFd);
}

TcpTransport::Connection& TcpTransport::connection(int peer, const char* op) {
  auto it = state_->conns.find(peer);
  if (it == state_->conns.end())
    fail(ErrorCode::Internal, "tcp transport: ", op, " to rank ", peer, ", which is not a connected peer");
  if (!it->second.error.empty()) fail(it->second.errorCode, it->second.error);
  return it->second;
}

void TcpTransport::isend(TransferOp& op) {
  Connection& c = connection(op.peer, "isend");
  op.doneBytes = 0;
  op.headerDone = false;
  op.complete = false;
  c.sends.push_back(&op);
}

void TcpTransport::irecv(TransferOp& op) {
  Connection& c = connection(op.peer, "irecv");
  op.doneBytes = 0;
  op.complete = false;
  c.recvs.push_back(&op);
}

void TcpTransport::poison(Connection& c, const std::string& why) {
  if (c.error.empty()) c.error = why;
  c.sends.clear();
  c.recvs.clear();
}

// Moves as many bytes as the socket takes without blocking, in both directions.
void TcpTransport::progress(Connection& c) {
  while (!c.sends.empty()) {
    TransferOp& op = *c.sends.front();
    if (!op.headerDone && op.doneBytes == 0 && c.txHeader.magic != kMagic)
      c.txHeader = WireHeader{kMagic, 0, op.tag, op.len};
    // Header bytes are counted in doneBytes until sent, then doneBytes restarts for the payload.
    iovec iov[2];
    int n = 0;
    if (!op.headerDone) {
      iov[n++] = {reinterpret_cast<char*>(&c.txHeader) + op.doneBytes, sizeof(WireHeader) - op.doneBytes};
      if (op.len) iov[n++] = {op.buf, op.len};
    } else {
      iov[n++] = {op.buf + op.doneBytes, op.len - op.doneBytes};
    }
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = n;
    ssize_t sent = ::sendmsg(c.fd(), &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent < 0) {
      if (errno == EAGAIN || errno == EINTR) return;
      c.errorCode = ErrorCode::PeerFailure;
      return poison(c, concat(c.name, " failed on the scale-out tier (tcp send: ", std::strerror(errno), ")"));
    }
    std::size_t s = static_cast<std::size_t>(sent);
    if (!op.headerDone) {
      std::size_t headerLeft = sizeof(WireHeader) - op.doneBytes;
      if (s < headerLeft) { op.doneBytes += s; return; }
      op.headerDone = true;
      op.doneBytes = s - headerLeft;
    } else {
      op.doneBytes += s;
    }
    if (op.doneBytes < op.len) return;
    op.complete = true;
    c.txHeader.magic = 0;
    c.sends.pop_front();
  }
  while (!c.recvs.empty()) {
    TransferOp& op = *c.recvs.front();
    if (c.rxHeaderBytes < sizeof(WireHeader)) {
      ssize_t got = ::recv(c.fd(), reinterpret_cast<char*>(&c.rxHeader) + c.rxHeaderBytes,
                           sizeof(WireHeader) - c.rxHeaderBytes, MSG_DONTWAIT);
      if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) {
        c.errorCode = ErrorCode::PeerFailure;
        return poison(c, concat(c.name, " closed its scale-out connection (tcp)",
                                got < 0 ? std::string(": ") + std::strerror(errno) : std::string()));
      }
      if (got < 0) return;
      c.rxHeaderBytes += static_cast<std::size_t>(got);
      if (c.rxHeaderBytes < sizeof(WireHeader)) return;
      if (c.rxHeader.magic != kMagic || c.rxHeader.tag != op.tag || c.rxHeader.len != op.len)
        return poison(c, concat("message from ", c.name, " does not match the posted receive: got tag ",
                                c.rxHeader.tag, " length ", c.rxHeader.len, ", expected tag ", op.tag,
                                " length ", op.len, " (mismatched collectives across ranks?)"));
    }
    if (op.doneBytes < op.len) {
      ssize_t got = ::recv(c.fd(), op.buf + op.doneBytes, op.len - op.doneBytes, MSG_DONTWAIT);
      if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) {
        c.errorCode = ErrorCode::PeerFailure;
        return poison(c, concat(c.name, " closed its scale-out connection mid-message (tcp)"));
      }
      if (got < 0) return;
      op.doneBytes += static_cast<std::size_t>(got);
      if (op.doneBytes < op.len) return;
    }
    op.complete = true;
    c.rxHeaderBytes = 0;
    c.recvs.pop_front();
  }
}

void TcpTransport::wait(const std::vector<TransferOp*>& ops, Deadline deadline, const std::string& what) {
  State& st = *state_;
  std::vector<pollfd> fds;
  std::vector<Connection*> polled;
  while (true) {
    bool allDone = true;
    for (auto& [peer, c] : st.conns)
      if (c.error.empty()) progress(c);
    for (TransferOp* op : ops) {
      if (op->complete) continue;
      Connection& c = st.conns.at(op->peer);
      if (!c.error.empty()) fail(c.errorCode, what, ": ", c.error);
      allDone = false;
    }
    if (allDone) return;
    if (st.aborted.load()) fail(ErrorCode::Aborted, what, ": communicator aborted");
    if (deadline.expired()) {
      std::string waitingFor;
      for (TransferOp* op : ops)
        if (!op->complete) {
          Connection& c = st.conns.at(op->peer);
          waitingFor = concat(op->isSend ? "sending to " : "receiving from ", c.name, ", ", op->doneBytes, " of ", op->len, " bytes moved");
          poison(c, concat("an earlier operation with ", c.name, " timed out; the connection is unusable"));
          c.errorCode = ErrorCode::Timeout;
          break;
        }
      fail(ErrorCode::Timeout, what, ": timed out on the scale-out tier (tcp) ", waitingFor);
    }
    fds.clear();
    polled.clear();
    for (auto& [peer, c] : st.conns) {
      short ev = (c.sends.empty() ? 0 : POLLOUT) | (c.recvs.empty() ? 0 : POLLIN);
      if (!ev || !c.error.empty()) continue;
      fds.push_back({c.fd(), ev, 0});
      polled.push_back(&c);
    }
    fds.push_back({st.wakeFd, POLLIN, 0});
    int ms = static_cast<int>(std::min(deadline.remaining(), std::chrono::milliseconds(kPollSlice)).count());
    ::poll(fds.data(), fds.size(), std::max(ms, 1));
  }
}

void TcpTransport::abort() {
  state_->aborted.store(true);
  // Peers waiting on us see the connection close at once rather than at their deadline.
  for (auto& [peer, c] : state_->conns)
    if (c.socket) ::shutdown(c.fd(), SHUT_RDWR);
  std::uint64_t one = 1;
  ssize_t ignored = ::write(state_->wakeFd, &one, sizeof(one));
  (void)ignored;
}

}  // namespace tiercc
