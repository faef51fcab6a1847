// The TCP store client: a Store whose calls are requests to a TcpStoreServer over one connection.
// Every transfer runs on a client-owned io_context with a time limit, so a stalled or vanished
// server turns into an error in bounded time instead of a hang.
#include <algorithm>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

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
using std::chrono::milliseconds;

// The server may start after the client: connecting is retried at this interval.
constexpr milliseconds kConnectRetryInterval(50);
// Time allowed by default for a request that does not wait for keys (SET, ADD, CHECK, ERASE).
constexpr milliseconds kRequestTimeout(60'000);
// Least time the server gets to accept the secret, even when connecting took the whole deadline.
constexpr milliseconds kHelloTimeout(5'000);
// Extra time after a GET/WAIT deadline for the server's TIMEOUT reply to arrive.
constexpr milliseconds kReplyGrace(1'000);

Clock::time_point later(Clock::time_point at, milliseconds extra) {
  return at >= Clock::time_point::max() - extra ? Clock::time_point::max() : at + extra;
}

class TcpStoreClient final : public Store {
 public:
  TcpStoreClient(std::string host, std::uint16_t port, Deadline connectDeadline, milliseconds requestTimeout,
                 const std::string& secret)
      : socket_(io_), host_(std::move(host)), port_(port), requestTimeout_(requestTimeout) {
    connect(connectDeadline);
    if (!secret.empty()) {
      call({proto::Op::Hello, {}, Bytes(secret.begin(), secret.end()), 0, 0},
           Deadline::after(std::max(connectDeadline.remaining(), kHelloTimeout)));
    }
  }
  ~TcpStoreClient() override {
    error_code ignored;
    socket_.close(ignored);
  }

  void set(const std::string& key, const Bytes& value) override {
    call({proto::Op::Set, {key}, value, 0, 0}, Deadline::after(requestTimeout_));
  }

  Bytes get(const std::string& key, Deadline deadline) override {
    return call(waitingRequest(proto::Op::Get, {key}, deadline), deadline).value;
  }

  std::int64_t add(const std::string& key, std::int64_t delta) override {
    return call({proto::Op::Add, {key}, {}, delta, 0}, Deadline::after(requestTimeout_)).number;
  }

  void wait(const std::vector<std::string>& keys, Deadline deadline) override {
    call(waitingRequest(proto::Op::Wait, keys, deadline), deadline);
  }

  bool check(const std::vector<std::string>& keys) override {
    return call({proto::Op::Check, keys, {}, 0, 0}, Deadline::after(requestTimeout_)).number != 0;
  }

  void erase(const std::string& key) override {
    call({proto::Op::Erase, {key}, {}, 0, 0}, Deadline::after(requestTimeout_));
  }

 private:
  static proto::Request waitingRequest(proto::Op op, std::vector<std::string> keys, Deadline deadline) {
    std::int64_t timeoutMs = deadline.remaining().count();
    if (timeoutMs >= proto::kLongestTimeoutMs) timeoutMs = proto::kWaitForever;
    return {op, std::move(keys), {}, 0, timeoutMs};
  }

  std::string address() const { return host_ + ":" + std::to_string(port_); }

  // ---- connecting ----

  void connect(Deadline deadline) {
    auto budget = deadline.remaining();
    std::string lastError = "no attempt made";
    while (!tryConnect(deadline, lastError)) {
      if (deadline.expired()) {
        fail(ErrorCode::Timeout, "store: could not connect to store server ", address(), " within ", budget.count(),
             " ms (", lastError, ")");
      }
      std::this_thread::sleep_until(deadline.capped(kConnectRetryInterval).at());
    }
    error_code ignored;
    socket_.set_option(tcp::no_delay(true), ignored);
    TIERCC_LOG(Info, Store) << "store: connected to store server " << address();
  }

  bool tryConnect(Deadline deadline, std::string& lastError) {
    std::vector<tcp::endpoint> endpoints;
    error_code ec = resolve(deadline, endpoints);
    if (!ec) {
      std::optional<error_code> connected;
      asio::async_connect(socket_, endpoints, [&](error_code e, const tcp::endpoint&) { connected = e; });
      ec = runUntil(io_, deadline.at(), connected, [&] { abandonSocket(); });
    }
    if (ec) {
      lastError = ec.message();
      abandonSocket();
    }
    return !ec;
  }

  // Numeric addresses need no lookup; names are looked up on a throwaway io_context, so that
  // Asio's resolver thread does not live as long as the client.
  error_code resolve(Deadline deadline, std::vector<tcp::endpoint>& endpoints) {
    error_code ec;
    auto address = asio::ip::make_address(host_, ec);
    if (!ec) {
      endpoints = {tcp::endpoint(address, port_)};
      return ec;
    }
    asio::io_context lookupIo;
    tcp::resolver resolver(lookupIo);
    std::optional<error_code> resolved;
    resolver.async_resolve(host_, std::to_string(port_), [&](error_code e, tcp::resolver::results_type results) {
      resolved = e;
      for (const auto& entry : results) endpoints.push_back(entry.endpoint());
    });
    return runUntil(lookupIo, deadline.at(), resolved, [&] { resolver.cancel(); });
  }

  // ---- requests ----

  // Sends request and returns the server's OK reply; turns every other outcome into an Error.
  proto::Reply call(const proto::Request& request, Deadline deadline) {
    Bytes frame = proto::encodeRequestFrame(request);
    std::lock_guard lock(mutex_);
    if (!broken_.empty()) wentAway(broken_);
    // A waiting request's own deadline is enforced by the server; ours catches a stalled server.
    bool waits = request.op == proto::Op::Get || request.op == proto::Op::Wait;
    auto limit = waits ? later(deadline.at(), kReplyGrace) : deadline.at();
    auto waited = deadline.remaining();
    proto::Reply reply = exchange(frame, limit, request, waits ? waited + kReplyGrace : waited);
    return checkReply(std::move(reply), request, waited);
  }

  proto::Reply exchange(const Bytes& frame, Clock::time_point limit, const proto::Request& request,
                        milliseconds allowed) {
    proto::FrameHeader header{};
    Bytes body;
    error_code ec = transfer(limit, [&](auto done) { asio::async_write(socket_, asio::buffer(frame), done); });
    if (!ec) ec = transfer(limit, [&](auto done) { asio::async_read(socket_, asio::buffer(header), done); });
    if (!ec) {
      try {
        body.resize(proto::decodeFrameLength(header, proto::kMaxReplyBytes));
      } catch (const Error& e) {
        wentAway(concat("sent a malformed reply: ", e.what()));
      }
      ec = transfer(limit, [&](auto done) { asio::async_read(socket_, asio::buffer(body), done); });
    }
    // Our limit, not a kernel ETIMEDOUT (which means the server's host is unreachable).
    if (ec == asio::error::timed_out && Clock::now() >= limit) noReply(request, allowed);
    if (ec) wentAway(ec.message());
    try {
      return proto::decodeReply(body);
    } catch (const Error& e) {
      wentAway(concat("sent a malformed reply: ", e.what()));
    }
  }

  proto::Reply checkReply(proto::Reply reply, const proto::Request& request, milliseconds waited) const {
    switch (reply.status) {
      case proto::Status::Ok:
        return reply;
      case proto::Status::Timeout:
        throw Error(ErrorCode::Timeout,
                    concat(proto::timeoutMessage(waited, reply.missingKeys), " (store server ", address(), ")"));
      case proto::Status::Error:
        break;
    }
    if (request.op == proto::Op::Hello) {
      fail(ErrorCode::InvalidArgument, "store server ", address(), " refused this process's secret: ", reply.message);
    }
    fail(ErrorCode::InvalidArgument, "store server ", address(), " rejected ", proto::toString(request.op),
         " of key(s) ", proto::quoteKeys(request.keys), ": ", reply.message);
  }

  // Starts one async operation (given its completion handler) and runs it to completion or limit.
  template <typename Start>
  error_code transfer(Clock::time_point limit, Start start) {
    std::optional<error_code> result;
    start([&result](error_code ec, std::size_t) { result = ec; });
    return runUntil(io_, limit, result, [&] { abandonSocket(); });
  }

  // Runs io until `result` is set or limit passes; then cancels and drains, so that no handler
  // referring to the caller's locals outlives the call.
  template <typename Cancel>
  static error_code runUntil(asio::io_context& io, Clock::time_point limit, std::optional<error_code>& result,
                             Cancel cancel) {
    io.restart();
    if (limit == Clock::time_point::max()) {
      io.run();
    } else {
      io.run_until(limit);
    }
    if (result) return *result;
    cancel();
    io.restart();
    io.run();
    return asio::error::timed_out;
  }

  void abandonSocket() {
    error_code ignored;
    socket_.close(ignored);
  }

  // The connection is now out of step with the server (a reply may still come): give it up.
  [[noreturn]] void noReply(const proto::Request& request, milliseconds allowed) {
    broken_ = concat("no reply to ", proto::toString(request.op), " within ", allowed.count(), " ms");
    abandonSocket();
    fail(ErrorCode::Timeout, "store: store server ", address(), " did not answer ", proto::toString(request.op),
         " of key(s) ", proto::quoteKeys(request.keys), " within ", allowed.count(), " ms");
  }

  [[noreturn]] void wentAway(const std::string& why) {
    if (broken_.empty()) {
      broken_ = why;
      abandonSocket();
      TIERCC_LOG(Warn, Store) << "store: store server " << address() << " went away (" << why << ")";
    }
    fail(ErrorCode::PeerFailure, "store server ", address(), " went away (", broken_, ")");
  }

  std::mutex mutex_;
  asio::io_context io_;  // before socket_: outlives it
  tcp::socket socket_;
  std::string host_;
  std::uint16_t port_;
  milliseconds requestTimeout_;
  std::string broken_;  // why the connection was given up; empty while it works
};

}  // namespace

std::shared_ptr<Store> connectTcpStore(const std::string& host, std::uint16_t port, Deadline connectDeadline,
                                       std::chrono::milliseconds requestTimeout, const std::string& secret) {
  TIERCC_REQUIRE_ARG(!host.empty() && port != 0, "connectTcpStore: invalid address '", host, ":", port, "'");
  TIERCC_REQUIRE_ARG(requestTimeout.count() > 0, "connectTcpStore: request timeout must be positive");
  return std::make_shared<TcpStoreClient>(
      host, port, connectDeadline,
      requestTimeout == std::chrono::milliseconds::max() ? kRequestTimeout : requestTimeout, secret);
}

}  // namespace tiercc
