// One client connection of the store server (see store_session.hpp).
#include "bootstrap/store_session.hpp"

#include "core/errors.hpp"
#include "core/log.hpp"

namespace tiercc::store_server {
namespace {

// How long a rejected connection may keep sending before it is closed regardless.
constexpr auto kLingerTime = std::chrono::seconds(1);

}  // namespace

std::string describe(const tcp::endpoint& endpoint) {
  auto address = endpoint.address();
  std::string host = address.is_v6() ? "[" + address.to_string() + "]" : address.to_string();
  return host + ":" + std::to_string(endpoint.port());
}

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
                              self->bodyLength_ =
                                  proto::decodeFrameLength(self->header_, TcpStoreServer::kMaxFrameBytes);
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

}  // namespace tiercc::store_server
