// TcpStoreServer: the bootstrap store served over TCP with Boost.Asio, all state on one io thread
// so nothing needs a lock. GET and WAIT park as waiters, answered on SET/ADD or by their own timer,
// so a client that waits never holds up another. A client is held to TcpStoreServer::Limits: a
// frame's body is read in chunks as it arrives (announcing 64 MiB costs nothing until the bytes
// come), a frame begun must finish within frameTime (a slow client is cut off; an idle one, between
// frames, is not: ranks sit idle for hours), replies it leaves unread are bounded, and so are
// connections, key and value sizes and the bytes held. A server with a secret serves a
// connection only once it presented the secret (a HELLO), which it must do within authTime.
// The pieces: store_server_state.hpp (the data and the waiters), store_session.hpp (a connection),
// and here the acceptor and its io thread.
#include <mutex>
#include <set>
#include <thread>

#include "bootstrap/store.hpp"
#include "bootstrap/store_session.hpp"
#include "core/errors.hpp"
#include "core/log.hpp"

namespace tiercc {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;
using store_server::describe;
using store_server::Session;
using store_server::StoreState;

// Pause before accepting again after an accept error (e.g. out of file descriptors).
constexpr auto kAcceptRetryDelay = std::chrono::milliseconds(50);

}  // namespace

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
