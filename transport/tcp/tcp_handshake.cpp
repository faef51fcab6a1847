// The TCP transport's handshakes (see tcp_handshake.hpp): non-blocking dials and accepts, the
// hello, and the rule that settles simultaneous dials.
#include "transport/tcp/tcp_handshake.hpp"

#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/errors.hpp"
#include "core/log.hpp"

namespace tiercc::tcpnet {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

constexpr std::uint32_t kHelloMagic = 0x4f4c4548;  // "HELO"
constexpr std::uint32_t kAccept = 0x54504341;      // "ACPT"
constexpr std::uint32_t kReject = 0x544a4352;      // "RCJT"
// A connection that presents no hello this soon is not a peer (a port scan, a stray client).
constexpr auto kHelloTime = std::chrono::seconds(30);

struct Hello {
  std::uint32_t magic;
  std::int32_t rank;
};

bool readyFor(int fd, short events) {
  pollfd p{fd, events, 0};
  return ::poll(&p, 1, 0) > 0;
}

// Moves bytes [done, len) of `buf` through `fd` without blocking. Returns 1 when all moved, 0 when
// the socket takes or gives no more now, -1 on an error or (reading) the peer closing: errno tells.
int moveBytes(int fd, void* buf, std::size_t len, std::size_t& done, bool send) {
  while (done < len) {
    char* p = static_cast<char*>(buf) + done;
    ssize_t n = send ? ::send(fd, p, len - done, MSG_DONTWAIT | MSG_NOSIGNAL) : ::recv(fd, p, len - done, MSG_DONTWAIT);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
    } else if (n == 0 && !send) {
      errno = ECONNRESET;
      return -1;
    } else if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
      return 0;
    } else {
      return -1;
    }
  }
  return 1;
}

}  // namespace

struct Handshakes::Dial {
  enum class Stage { Connecting, SendingHello, AwaitingReply } stage = Stage::Connecting;
  int peer = -1;
  std::string name, address;
  std::unique_ptr<Socket> socket;
  Hello hello{};
  std::size_t helloSent = 0;
  std::uint32_t reply = 0;
  std::size_t replyRead = 0;
  bool done = false;
};

struct Handshakes::Incoming {
  std::unique_ptr<Socket> socket;
  Hello hello{};
  std::size_t helloRead = 0;
  std::chrono::steady_clock::time_point since = std::chrono::steady_clock::now();
  bool done = false;
};

Handshakes::Handshakes(asio::io_context& io, tcp::acceptor acceptor, int rank, int worldSize)
    : io_(io), acceptor_(std::move(acceptor)), rank_(rank), worldSize_(worldSize), settled_(worldSize, false) {
  acceptor_.non_blocking(true);
}

Handshakes::~Handshakes() = default;

bool Handshakes::dialing(int peer) const {
  return std::any_of(dials_.begin(), dials_.end(), [&](const auto& d) { return d->peer == peer && !d->done; });
}

void Handshakes::dial(int peer, const tcp::endpoint& to, const std::string& name) {
  if (settled(peer) || dialing(peer)) return;
  auto d = std::make_unique<Dial>();
  d->peer = peer;
  d->name = name;
  d->address = concat(to.address().to_string(), ":", to.port());
  d->hello = {kHelloMagic, rank_};
  d->socket = std::make_unique<Socket>(io_);
  boost::system::error_code ec;
  d->socket->open(to.protocol(), ec);
  if (!ec) d->socket->non_blocking(true, ec);
  if (!ec) d->socket->set_option(tcp::no_delay(true), ec);
  if (ec) fail(ErrorCode::SystemError, "scale-out setup: socket for ", name, ": ", ec.message());
  // A blocking connect would wait for the kernel's SYN retries (minutes) on a blackholed
  // address; this one completes (or fails) in progress(), under the waiting operation's deadline.
  d->socket->connect(to, ec);
  if (ec && ec != asio::error::in_progress && ec != asio::error::would_block)
    fail(ErrorCode::TransportError, "scale-out setup: cannot connect to ", name, " at ", d->address, ": ",
         ec.message());
  TIERCC_LOG(Trace, Net) << "tcp: dialing " << name << " at " << d->address;
  dials_.push_back(std::move(d));
}

void Handshakes::acceptNew() {
  while (true) {
    auto socket = std::make_unique<Socket>(io_);
    boost::system::error_code ec;
    acceptor_.accept(*socket, ec);
    if (ec == asio::error::would_block || ec == asio::error::try_again) return;
    if (ec) {
      // Out of descriptors, or a connection reset before we took it: the dialer retries or
      // reports; this rank keeps listening.
      TIERCC_LOG(Warn, Net) << "tcp: accept: " << ec.message();
      return;
    }
    socket->non_blocking(true, ec);
    if (!ec) socket->set_option(tcp::no_delay(true), ec);
    if (ec) continue;
    auto in = std::make_unique<Incoming>();
    in->socket = std::move(socket);
    incoming_.push_back(std::move(in));
  }
}

void Handshakes::progressDial(Dial& d, std::vector<Outcome>& out) {
  const int fd = d.socket->native_handle();
  auto failWith = [&](ErrorCode code, const std::string& why) {
    d.done = true;
    out.push_back({d.peer, nullptr, code, why});
  };
  if (d.stage == Dial::Stage::Connecting) {
    if (!readyFor(fd, POLLOUT)) return;
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err)
      return failWith(ErrorCode::PeerFailure, concat("cannot connect to ", d.name, " at ", d.address, ": ",
                                                     std::strerror(err), " (it may have exited or failed)"));
    d.stage = Dial::Stage::SendingHello;
  }
  if (d.stage == Dial::Stage::SendingHello) {
    const int r = moveBytes(fd, &d.hello, sizeof d.hello, d.helloSent, true);
    if (r < 0) return failWith(ErrorCode::PeerFailure, concat("hello to ", d.name, ": ", std::strerror(errno)));
    if (r == 0) return;
    d.stage = Dial::Stage::AwaitingReply;
  }
  const int r = moveBytes(fd, &d.reply, sizeof d.reply, d.replyRead, false);
  if (r < 0)
    return failWith(
        ErrorCode::PeerFailure,
        concat(d.name, " closed the connection before answering this rank's hello (", std::strerror(errno), ")"));
  if (r == 0) return;
  d.done = true;
  if (d.reply == kAccept) {
    settled_[static_cast<std::size_t>(d.peer)] = true;
    out.push_back({d.peer, std::move(d.socket), ErrorCode::TransportError, {}});
  } else if (d.reply != kReject) {
    failWith(ErrorCode::TransportError,
             concat(d.name, " answered this rank's hello with ", d.reply, ", not a tiercc reply"));
  }
  // Rejected: the peer, the lower rank, dials us; its dial settles in progressIncoming.
}

void Handshakes::progressIncoming(Incoming& in, std::vector<Outcome>& out) {
  const int fd = in.socket->native_handle();
  const int r = moveBytes(fd, &in.hello, sizeof in.hello, in.helloRead, false);
  if (r < 0 || (r == 0 && std::chrono::steady_clock::now() - in.since > kHelloTime)) {
    in.done = true;  // a dial given up (its rank settled on ours), or not a peer
    return;
  }
  if (r == 0) return;
  in.done = true;
  const int d = in.hello.rank;
  if (in.hello.magic != kHelloMagic || d < 0 || d >= worldSize_ || d == rank_) {
    TIERCC_LOG(Warn, Net) << "tcp: dropped a connection whose hello is not a peer's (magic " << in.hello.magic
                          << ", rank " << d << ")";
    return;
  }
  const bool reject = settled(d) || (dialing(d) && d > rank_);
  std::uint32_t reply = reject ? kReject : kAccept;
  std::size_t sent = 0;
  // Four bytes into an empty socket buffer: they go at once, or the dialer is gone.
  if (moveBytes(fd, &reply, sizeof reply, sent, true) != 1 || reject) return;
  for (auto& dial : dials_)
    if (dial->peer == d) dial->done = true;  // ours loses: d, the lower rank, rejects it
  settled_[static_cast<std::size_t>(d)] = true;
  out.push_back({d, std::move(in.socket), ErrorCode::TransportError, {}});
}

std::vector<Handshakes::Outcome> Handshakes::progress() {
  std::vector<Outcome> out;
  acceptNew();
  // Incoming first: a hello from a lower rank that we dial too settles before our dial reads
  // its rejection, so that this rank never sees both sockets settle.
  for (auto& in : incoming_) progressIncoming(*in, out);
  for (auto& d : dials_)
    if (!d->done) progressDial(*d, out);
  incoming_.erase(std::remove_if(incoming_.begin(), incoming_.end(), [](const auto& in) { return in->done; }),
                  incoming_.end());
  dials_.erase(std::remove_if(dials_.begin(), dials_.end(), [](const auto& d) { return d->done; }), dials_.end());
  return out;
}

void Handshakes::addPollFds(std::vector<pollfd>& fds) const {
  fds.push_back({const_cast<tcp::acceptor&>(acceptor_).native_handle(), POLLIN, 0});
  for (const auto& d : dials_)
    fds.push_back(
        {d->socket->native_handle(), static_cast<short>(d->stage == Dial::Stage::AwaitingReply ? POLLIN : POLLOUT), 0});
  for (const auto& in : incoming_) fds.push_back({in->socket->native_handle(), POLLIN, 0});
}

void Handshakes::shutdownAll() {
  for (const auto& d : dials_) ::shutdown(d->socket->native_handle(), SHUT_RDWR);
  for (const auto& in : incoming_) ::shutdown(in->socket->native_handle(), SHUT_RDWR);
  boost::system::error_code ec;
  acceptor_.close(ec);
}

}  // namespace tiercc::tcpnet
