// TcpStoreServer: the bootstrap store served over TCP with Boost.Asio, all state on one io thread
// so nothing needs a lock. GET and WAIT park as waiters, answered on SET/ADD or by their own timer,
// so a client that waits never holds up another. A client is held to TcpStoreServer::Limits: a
// frame's body is read in chunks as it arrives (announcing 64 MiB costs nothing until the bytes
// come), a frame begun must finish within frameTime (a slow client is cut off; an idle one, between
// frames, is not: ranks sit idle for hours), replies it leaves unread are bounded, and so are
// connections, key and value sizes and the bytes held. A server with a secret serves a
// connection only once it presented the secret (a HELLO), which it must do within authTime.
#include <deque>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <utility>
#include <variant>

// After <utility>: Boost 1.74's awaitable.hpp uses std::exchange without including it.
#include <boost/asio.hpp>

#include "core/errors.hpp"
#include "core/log.hpp"
#include "bootstrap/store.hpp"
#include "bootstrap/store_protocol.hpp"

namespace tiercc {
namespace {

namespace asio = boost::asio;
namespace proto = store_protocol;
using asio::ip::tcp;
using boost::system::error_code;

// How long a rejected connection may keep sending before it is closed regardless.
constexpr auto kLingerTime = std::chrono::seconds(1);
// Pause before accepting again after an accept error (e.g. out of file descriptors).
constexpr auto kAcceptRetryDelay = std::chrono::milliseconds(50);

class Session;

// A GET or WAIT that found keys missing. Filed under one missing key at a time.
struct Waiter {
  Waiter(asio::any_io_executor executor, std::weak_ptr<Session> s, proto::Request r)
      : session(std::move(s)), request(std::move(r)), timer(std::move(executor)) {}
  std::weak_ptr<Session> session;
  proto::Request request;
  std::string filedUnder;
  asio::steady_timer timer;
  bool done = false;
};

// The key/value data and the parked waiters. Used on the io thread only.
class StoreState {
 public:
  /// A reply now, or the waiter that will answer the session later.
  using Outcome = std::variant<proto::Reply, std::shared_ptr<Waiter>>;

  StoreState(asio::any_io_executor executor, const TcpStoreServer::Limits& limits)
      : executor_(std::move(executor)), limits_(limits) {}
  Outcome handle(const proto::Request& request, const std::shared_ptr<Session>& session);
  /// Forgets a waiter whose connection closed.
  void drop(const std::shared_ptr<Waiter>& waiter);

 private:
  proto::Reply answer(const proto::Request& request);
  Outcome getOrWait(const proto::Request& request, const std::shared_ptr<Session>& session);
  void park(const std::shared_ptr<Waiter>& waiter, const std::string& missingKey);
  void unfile(const std::shared_ptr<Waiter>& waiter);
  void wake(const std::string& key);
  void complete(const std::shared_ptr<Waiter>& waiter, const proto::Reply& reply);
  void expire(const std::shared_ptr<Waiter>& waiter);
  proto::Reply okReply(const proto::Request& request) const;
  /// InvalidArgument, before anything changes, for a key or value over its limit.
  void checkSizes(const proto::Request& request) const;
  /// InvalidArgument, before anything changes, when storing `value` at `key` would pass maxTotalBytes.
  void checkRoom(const std::string& key, std::size_t valueBytes) const;
  static std::size_t entryBytes(const std::string& key, std::size_t valueBytes) {
    return key.size() + valueBytes + TcpStoreServer::kEntryOverheadBytes;
  }
  /// The size of the value at key, if there is one.
  std::optional<std::size_t> sizeAt(const std::string& key) const;
  /// Updates heldBytes_ after the value at key (whose size was `before`) was stored.
  void account(const std::string& key, std::optional<std::size_t> before);

  asio::any_io_executor executor_;
  const TcpStoreServer::Limits& limits_;
  proto::KeyValueMap data_;
  std::size_t heldBytes_ = 0;  // entryBytes() of every entry in data_
  std::unordered_map<std::string, std::vector<std::shared_ptr<Waiter>>> waiters_;
};

// One client connection: reads frames, answers them in order, and closes on malformed input.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, StoreState& state, const TcpStoreServer::Limits& limits, const Bytes& secret,
          std::function<void(Session*)> onClosed);
  void start();
  /// Answers the parked request.
  void finishWait(const proto::Reply& reply);
  /// Closes the connection now and forgets its waiter.
  void close();

 private:
  void readHeader();
  void readBody();
  /// The first byte of a frame came: the rest must follow within the frame time.
  void startFrameTimer();
  void dispatch();
  /// A request on a connection of a server with a secret, before the secret came; false if rejected.
  bool authenticate(const proto::Request& request);
  void send(const proto::Reply& reply);
  void writeNext();
  void rejectAndClose(const std::string& why);
  void linger();
  void drain();

  tcp::socket socket_;
  StoreState& state_;
  std::function<void(Session*)> onClosed_;
  std::string peer_;
  const TcpStoreServer::Limits& limits_;
  const Bytes& secret_;
  bool authenticated_;
  asio::steady_timer authTimer_;
  proto::FrameHeader header_{};
  std::size_t headerBytes_ = 0;  // of header_, read so far
  std::size_t bodyLength_ = 0;   // announced by the header
  Bytes body_;                   // what arrived of the body; also the scratch buffer of drain()
  asio::steady_timer frameTimer_;
  std::deque<Bytes> outbox_;
  std::size_t outboxBytes_ = 0;
  std::shared_ptr<Waiter> waiter_;
  std::optional<asio::steady_timer> lingerTimer_;
  bool rejecting_ = false;
  bool closed_ = false;
};

std::string describe(const tcp::endpoint& endpoint) {
  auto address = endpoint.address();
  std::string host = address.is_v6() ? "[" + address.to_string() + "]" : address.to_string();
  return host + ":" + std::to_string(endpoint.port());
}

// ---- StoreState ----

StoreState::Outcome StoreState::handle(const proto::Request& request, const std::shared_ptr<Session>& session) {
  checkSizes(request);
  if (request.op == proto::Op::Get || request.op == proto::Op::Wait) return getOrWait(request, session);
  return answer(request);
}

proto::Reply StoreState::answer(const proto::Request& request) {
  proto::Reply reply;
  switch (request.op) {
    case proto::Op::Set: {
      const std::string& key = request.keys.front();
      const auto before = sizeAt(key);
      checkRoom(key, request.value.size());
      data_[key] = request.value;
      account(key, before);
      wake(key);
      break;
    }
    case proto::Op::Add: {
      const std::string& key = request.keys.front();
      const auto before = sizeAt(key);
      checkRoom(key, 20);  // the longest decimal int64
      reply.number = proto::addToCounter(data_, key, request.delta);
      account(key, before);
      wake(key);
      break;
    }
    case proto::Op::Check:
      reply.number = proto::missingKeys(data_, request.keys).empty() ? 1 : 0;
      break;
    case proto::Op::Erase: {
      const std::string& key = request.keys.front();
      if (auto before = sizeAt(key)) heldBytes_ -= entryBytes(key, *before);
      data_.erase(key);
      break;
    }
    default:
      fail(ErrorCode::Internal, "store server: unexpected ", proto::toString(request.op));
  }
  return reply;
}

void StoreState::checkSizes(const proto::Request& request) const {
  for (const auto& key : request.keys) {
    if (key.size() > limits_.maxKeyBytes) {
      fail(ErrorCode::InvalidArgument, "store: a key of ", key.size(), " bytes is over the limit of ",
           limits_.maxKeyBytes, " bytes");
    }
  }
  if (request.op == proto::Op::Set && request.value.size() > limits_.maxValueBytes) {
    fail(ErrorCode::InvalidArgument, "store: a value of ", request.value.size(), " bytes is over the limit of ",
         limits_.maxValueBytes, " bytes");
  }
}

std::optional<std::size_t> StoreState::sizeAt(const std::string& key) const {
  auto it = data_.find(key);
  if (it == data_.end()) return std::nullopt;
  return it->second.size();
}

void StoreState::checkRoom(const std::string& key, std::size_t valueBytes) const {
  const auto before = sizeAt(key);
  const std::size_t released = before ? entryBytes(key, *before) : 0;
  const std::size_t after = heldBytes_ - released + entryBytes(key, valueBytes);
  if (after > limits_.maxTotalBytes) {
    fail(ErrorCode::InvalidArgument, "store: full: it holds ", heldBytes_, " bytes in ", data_.size(),
         " keys, and storing ", valueBytes, " bytes at '", key, "' would pass the limit of ", limits_.maxTotalBytes,
         " bytes");
  }
}

void StoreState::account(const std::string& key, std::optional<std::size_t> before) {
  if (before) heldBytes_ -= entryBytes(key, *before);
  heldBytes_ += entryBytes(key, data_.at(key).size());
}

StoreState::Outcome StoreState::getOrWait(const proto::Request& request, const std::shared_ptr<Session>& session) {
  auto missing = proto::missingKeys(data_, request.keys);
  if (missing.empty()) return okReply(request);
  if (request.timeoutMs == 0) return proto::Reply{proto::Status::Timeout, {}, 0, missing, {}};
  auto waiter = std::make_shared<Waiter>(executor_, session, request);
  if (request.timeoutMs != proto::kWaitForever && request.timeoutMs < proto::kLongestTimeoutMs) {
    waiter->timer.expires_after(std::chrono::milliseconds(request.timeoutMs));
    waiter->timer.async_wait([this, waiter](error_code ec) {
      if (!ec) expire(waiter);
    });
  }
  park(waiter, missing.front());
  return waiter;
}

proto::Reply StoreState::okReply(const proto::Request& request) const {
  proto::Reply reply;
  if (request.op == proto::Op::Get) reply.value = data_.at(request.keys.front());
  return reply;
}

void StoreState::park(const std::shared_ptr<Waiter>& waiter, const std::string& missingKey) {
  waiter->filedUnder = missingKey;
  waiters_[missingKey].push_back(waiter);
}

void StoreState::unfile(const std::shared_ptr<Waiter>& waiter) {
  auto it = waiters_.find(waiter->filedUnder);
  if (it == waiters_.end()) return;
  std::erase(it->second, waiter);
  if (it->second.empty()) waiters_.erase(it);
}

// Re-examines the waiters filed under key: each completes or is re-filed under its next missing key.
void StoreState::wake(const std::string& key) {
  auto node = waiters_.extract(key);
  if (node.empty()) return;
  for (const auto& waiter : node.mapped()) {
    if (waiter->done) continue;
    auto missing = proto::missingKeys(data_, waiter->request.keys);
    if (missing.empty()) {
      complete(waiter, okReply(waiter->request));
    } else {
      park(waiter, missing.front());
    }
  }
}

void StoreState::complete(const std::shared_ptr<Waiter>& waiter, const proto::Reply& reply) {
  waiter->done = true;
  waiter->timer.cancel();
  if (auto session = waiter->session.lock()) session->finishWait(reply);
}

void StoreState::expire(const std::shared_ptr<Waiter>& waiter) {
  if (waiter->done) return;
  unfile(waiter);
  auto missing = proto::missingKeys(data_, waiter->request.keys);
  complete(waiter, proto::Reply{proto::Status::Timeout, {}, 0, missing, {}});
}

void StoreState::drop(const std::shared_ptr<Waiter>& waiter) {
  if (waiter->done) return;
  waiter->done = true;
  waiter->timer.cancel();
  unfile(waiter);
}

// ---- Session ----

Session::Session(tcp::socket socket, StoreState& state, const TcpStoreServer::Limits& limits, const Bytes& secret,
                 std::function<void(Session*)> onClosed)
    : socket_(std::move(socket)),
      state_(state),
      onClosed_(std::move(onClosed)),
      limits_(limits),
      secret_(secret),
      authenticated_(secret.empty()),
      authTimer_(socket_.get_executor()),
      frameTimer_(socket_.get_executor()) {
  error_code ec;
  auto remote = socket_.remote_endpoint(ec);
  peer_ = ec ? "unknown peer" : describe(remote);
}

// A connection that has not presented the secret is cut off after authTime, idle or not: only
// those who know the secret may hold a connection for hours.
void Session::start() {
  if (!authenticated_) {
    authTimer_.expires_after(limits_.authTime);
    authTimer_.async_wait([self = shared_from_this()](error_code ec) {
      if (ec || self->closed_ || self->authenticated_) return;
      TIERCC_LOG(Warn, Store) << "store server: closing connection from " << self->peer_
                              << ": it did not present the job's secret within " << self->limits_.authTime.count()
                              << " ms";
      self->close();
    });
  }
  readHeader();
}

bool Session::authenticate(const proto::Request& request) {
  if (request.op != proto::Op::Hello) {
    rejectAndClose(concat("not authenticated: this store requires the job's secret (TIERCC_STORE_SECRET) before ",
                          proto::toString(request.op)));
    return false;
  }
  if (!proto::sameSecret(request.value, secret_)) {
    rejectAndClose("not authenticated: wrong secret (the job's TIERCC_STORE_SECRET differs)");
    return false;
  }
  authenticated_ = true;
  authTimer_.cancel();
  return true;
}

// The header is read as it comes, so that the frame time starts with its first byte.
void Session::readHeader() {
  socket_.async_read_some(asio::buffer(header_.data() + headerBytes_, header_.size() - headerBytes_),
                          [self = shared_from_this()](error_code ec, std::size_t n) {
                            if (ec || self->closed_) return self->close();
                            if (self->headerBytes_ == 0 && n > 0) self->startFrameTimer();
                            self->headerBytes_ += n;
                            if (self->headerBytes_ < self->header_.size()) return self->readHeader();
                            self->headerBytes_ = 0;
                            try {
                              self->bodyLength_ = proto::decodeFrameLength(self->header_, TcpStoreServer::kMaxFrameBytes);
                            } catch (const Error& e) {
                              self->frameTimer_.cancel();
                              return self->rejectAndClose(e.what());
                            }
                            self->body_.clear();
                            self->readBody();
                          });
}

void Session::startFrameTimer() {
  frameTimer_.expires_after(limits_.frameTime);
  frameTimer_.async_wait([self = shared_from_this()](error_code ec) {
    if (ec || self->closed_) return;  // cancelled: the frame came whole
    TIERCC_LOG(Warn, Store) << "store server: closing connection from " << self->peer_ << ": a frame took longer than "
                            << self->limits_.frameTime.count() << " ms to arrive (" << self->body_.size() << " of "
                            << self->bodyLength_ << " body bytes)";
    self->close();
  });
}

// In chunks, growing the buffer with what arrived: memory follows the bytes, not the announcement.
void Session::readBody() {
  constexpr std::size_t kChunk = 64 << 10;
  const std::size_t got = body_.size();
  if (got == bodyLength_) {
    frameTimer_.cancel();
    return dispatch();
  }
  const std::size_t chunk = std::min(kChunk, bodyLength_ - got);
  body_.resize(got + chunk);
  socket_.async_read_some(asio::buffer(body_.data() + got, chunk),
                          [self = shared_from_this(), got](error_code ec, std::size_t n) {
                            if (ec || self->closed_) return self->close();
                            self->body_.resize(got + n);
                            self->readBody();
                          });
}

void Session::dispatch() {
  proto::Request request;
  try {
    request = proto::decodeRequest(body_);
  } catch (const Error& e) {
    return rejectAndClose(e.what());
  }
  body_ = Bytes();
  // The client serialises its calls, so a request while one is parked breaks the protocol.
  if (waiter_) return rejectAndClose("request while a GET/WAIT is still pending");
  if (request.op == proto::Op::Hello) {
    if (authenticated_ && secret_.empty() && !request.value.empty()) {
      return rejectAndClose(
          "this store has no secret, but the client presented one (the job's processes disagree "
          "on TIERCC_STORE_SECRET)");
    }
    if (!authenticated_ && !authenticate(request)) return;
    send(proto::Reply{});
    return readHeader();
  }
  if (!authenticated_) {
    authenticate(request);  // rejects it: only a HELLO authenticates
    return;
  }
  try {
    auto outcome = state_.handle(request, shared_from_this());
    if (auto* reply = std::get_if<proto::Reply>(&outcome)) {
      send(*reply);
    } else {
      waiter_ = std::get<std::shared_ptr<Waiter>>(outcome);
    }
  } catch (const std::exception& e) {
    send(proto::Reply{proto::Status::Error, {}, 0, {}, e.what()});
  }
  readHeader();
}

void Session::finishWait(const proto::Reply& reply) {
  waiter_ = nullptr;
  send(reply);
}

void Session::send(const proto::Reply& reply) {
  if (closed_ || rejecting_) return;
  Bytes frame = proto::encodeReplyFrame(reply);
  if (outboxBytes_ + frame.size() > limits_.maxUnreadReplyBytes) {
    TIERCC_LOG(Warn, Store) << "store server: closing connection from " << peer_ << ": it left "
                            << outboxBytes_ + frame.size() << " bytes of replies unread (limit "
                            << limits_.maxUnreadReplyBytes << ")";
    return close();
  }
  outboxBytes_ += frame.size();
  outbox_.push_back(std::move(frame));
  if (outbox_.size() == 1) writeNext();
}

void Session::writeNext() {
  asio::async_write(socket_, asio::buffer(outbox_.front()), [self = shared_from_this()](error_code ec, std::size_t) {
    if (ec || self->closed_) return self->close();
    self->outboxBytes_ -= self->outbox_.front().size();
    self->outbox_.pop_front();
    if (!self->outbox_.empty()) return self->writeNext();
    if (self->rejecting_) self->linger();
  });
}

void Session::rejectAndClose(const std::string& why) {
  TIERCC_LOG(Warn, Store) << "store server: closing connection from " << peer_ << ": " << why;
  if (waiter_) state_.drop(waiter_);
  waiter_ = nullptr;
  send(proto::Reply{proto::Status::Error, {}, 0, {}, why});
  rejecting_ = true;  // after send(): nothing else goes out after the error
}

// Half-closes after the error reply and drains what the peer still sends: closing with unread
// input would reset the connection and could destroy the reply before the peer reads it.
void Session::linger() {
  error_code ignored;
  socket_.shutdown(tcp::socket::shutdown_send, ignored);
  lingerTimer_.emplace(socket_.get_executor());
  lingerTimer_->expires_after(kLingerTime);
  lingerTimer_->async_wait([self = shared_from_this()](error_code) { self->close(); });
  body_.resize(4096);
  drain();
}

void Session::drain() {
  socket_.async_read_some(asio::buffer(body_), [self = shared_from_this()](error_code ec, std::size_t) {
    if (ec || self->closed_) return self->close();
    self->drain();
  });
}

void Session::close() {
  if (closed_) return;
  closed_ = true;
  if (waiter_) state_.drop(waiter_);
  waiter_ = nullptr;
  error_code ignored;
  socket_.shutdown(tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
  if (lingerTimer_) lingerTimer_->cancel();
  frameTimer_.cancel();
  authTimer_.cancel();
  if (onClosed_) onClosed_(this);
}

}  // namespace

// ---- TcpStoreServer::Impl ----

class TcpStoreServer::Impl {
 public:
  Impl(const std::string& bindAddress, std::uint16_t port, const Limits& limits, const std::string& secret)
      : limits_(limits),
        secret_(secret.begin(), secret.end()),
        acceptor_(io_),
        retryTimer_(io_),
        state_(io_.get_executor(), limits_) {
    listen(bindAddress, port);
    TIERCC_LOG(Info, Store) << "store server listening on " << describe(acceptor_.local_endpoint());
    accept();
    thread_ = std::thread([this] { run(); });
  }
  ~Impl() { stop(); }

  std::uint16_t port() const { return port_; }

  // Stops the io thread first, so that closing everything afterwards races with nothing.
  void stop() {
    std::lock_guard lock(stopMutex_);
    if (stopped_) return;
    stopped_ = true;
    io_.stop();
    if (thread_.joinable()) thread_.join();
    closeAll();
  }

 private:
  void listen(const std::string& bindAddress, std::uint16_t port) {
    error_code ec;
    tcp::resolver resolver(io_);
    auto results = resolver.resolve(bindAddress, std::to_string(port), tcp::resolver::passive, ec);
    if (ec || results.empty()) {
      fail(ErrorCode::InvalidArgument, "store server: cannot resolve bind address '", bindAddress, "': ", ec.message());
    }
    tcp::endpoint endpoint = results.begin()->endpoint();
    acceptor_.open(endpoint.protocol(), ec);
    if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) acceptor_.bind(endpoint, ec);
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      fail(ErrorCode::SystemError, "store server: cannot listen on ", describe(endpoint), ": ", ec.message());
    }
    port_ = acceptor_.local_endpoint().port();
  }

  void accept() {
    acceptor_.async_accept([this](error_code ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted) return;
      if (ec) return retryAccept(ec);
      startSession(std::move(socket));
      accept();
    });
  }

  void retryAccept(const error_code& ec) {
    TIERCC_LOG(Warn, Store) << "store server: accept failed: " << ec.message();
    retryTimer_.expires_after(kAcceptRetryDelay);
    retryTimer_.async_wait([this](error_code timerEc) {
      if (!timerEc) accept();
    });
  }

  void startSession(tcp::socket socket) {
    error_code ignored;
    if (sessions_.size() >= limits_.maxConnections) {
      if (!refusing_) {  // once per episode, not once per connection
        TIERCC_LOG(Warn, Store) << "store server: " << sessions_.size()
                                << " connections open (the limit): closing new ones";
      }
      refusing_ = true;
      socket.close(ignored);
      return;
    }
    refusing_ = false;
    socket.set_option(tcp::no_delay(true), ignored);
    auto session = std::make_shared<Session>(std::move(socket), state_, limits_, secret_, [this](Session* closed) {
      std::erase_if(sessions_, [closed](const auto& s) { return s.get() == closed; });
    });
    sessions_.insert(session);
    session->start();
  }

  // A handler that throws must not end the service for everyone: log it and keep running.
  void run() {
    for (;;) {
      try {
        io_.run();
        return;
      } catch (const std::exception& e) {
        TIERCC_LOG(Warn, Store) << "store server: unexpected error in a handler: " << e.what();
      }
    }
  }

  void closeAll() {
    error_code ignored;
    acceptor_.close(ignored);
    retryTimer_.cancel();
    auto sessions = std::move(sessions_);
    sessions_.clear();
    for (const auto& session : sessions) session->close();
  }

  const Limits limits_;
  const Bytes secret_;     // empty: every client is served
  bool refusing_ = false;  // at the connection limit
  // io_ first: it outlives every socket, timer and handler that refers to it.
  asio::io_context io_;
  tcp::acceptor acceptor_;
  asio::steady_timer retryTimer_;
  StoreState state_;
  std::set<std::shared_ptr<Session>> sessions_;
  std::uint16_t port_ = 0;
  std::thread thread_;
  std::mutex stopMutex_;
  bool stopped_ = false;
};

TcpStoreServer::TcpStoreServer(const std::string& bindAddress, std::uint16_t port)
    : TcpStoreServer(bindAddress, port, Limits{}) {}

TcpStoreServer::TcpStoreServer(const std::string& bindAddress, std::uint16_t port, const Limits& limits,
                               const std::string& secret)
    : impl_(std::make_unique<Impl>(bindAddress, port, limits, secret)) {}

TcpStoreServer::~TcpStoreServer() = default;

std::uint16_t TcpStoreServer::port() const { return impl_->port(); }

void TcpStoreServer::stop() { impl_->stop(); }

}  // namespace tiercc
