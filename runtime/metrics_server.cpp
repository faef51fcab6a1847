// The /metrics endpoint (see metrics_server.hpp). One request per connection, answered whole: a
// scrape is a few kilobytes. A request must arrive within kRequestTime and fit kRequestBytes.
#include "runtime/metrics_server.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

// After <utility>: Boost 1.74's awaitable.hpp uses std::exchange without including it.
#include <boost/asio.hpp>

#include "core/errors.hpp"
#include "core/log.hpp"

namespace tiercc {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;

constexpr auto kRequestTime = std::chrono::seconds(5);
constexpr std::size_t kRequestBytes = 8192;

struct Sources {
  std::mutex mutex;  // held while a scrape reads them: unregistering waits for it
  std::map<int, std::function<MetricSnapshot()>> byHandle;
  int next = 1;
};

Sources& sources() {
  static Sources* s = new Sources;  // never destroyed: the server thread may outlive main()
  return *s;
}

std::string scrape() {
  std::vector<MetricSnapshot> all;
  Sources& s = sources();
  std::lock_guard<std::mutex> lock(s.mutex);
  for (auto& [handle, snapshot] : s.byHandle) all.push_back(snapshot());
  return renderMetrics(all);
}

std::string response(const std::string& status, const std::string& type, const std::string& body) {
  return concat("HTTP/1.1 ", status, "\r\nContent-Type: ", type, "\r\nContent-Length: ", body.size(),
                "\r\nConnection: close\r\n\r\n", body);
}

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  explicit Connection(tcp::socket socket) : socket_(std::move(socket)), timer_(socket_.get_executor()) {}

  void start() {
    auto self = shared_from_this();
    timer_.expires_after(kRequestTime);
    timer_.async_wait([self](error_code ec) {
      if (!ec) self->socket_.close();  // too slow: cut off
    });
    asio::async_read_until(socket_, asio::dynamic_buffer(request_, kRequestBytes), "\r\n\r\n",
                           [self](error_code ec, std::size_t) { self->answer(ec); });
  }

 private:
  void answer(error_code ec) {
    timer_.cancel();
    if (ec) return;  // closed, too slow, or too long
    const auto lineEnd = request_.find("\r\n");
    const std::string line = request_.substr(0, lineEnd);
    if (line.rfind("GET /metrics ", 0) == 0 || line.rfind("GET /metrics?", 0) == 0)
      reply_ = response("200 OK", "text/plain; version=0.0.4; charset=utf-8", scrape());
    else if (line.rfind("GET ", 0) == 0)
      reply_ = response("404 Not Found", "text/plain", "tiercc serves /metrics only\n");
    else
      reply_ = response("405 Method Not Allowed", "text/plain", "GET /metrics\n");
    auto self = shared_from_this();
    asio::async_write(socket_, asio::buffer(reply_), [self](error_code, std::size_t) {
      error_code ignored;
      self->socket_.shutdown(tcp::socket::shutdown_both, ignored);
    });
  }

  tcp::socket socket_;
  asio::steady_timer timer_;
  std::string request_, reply_;
};

class Server {
 public:
  Server(const std::string& addr, std::uint16_t port)
      : acceptor_(io_, tcp::endpoint(asio::ip::make_address(addr), port)) {
    port_ = acceptor_.local_endpoint().port();
    accept();
    std::thread([this] { io_.run(); }).detach();
  }
  std::uint16_t port() const { return port_; }

 private:
  void accept() {
    acceptor_.async_accept([this](error_code ec, tcp::socket socket) {
      if (!ec) std::make_shared<Connection>(std::move(socket))->start();
      accept();
    });
  }

  asio::io_context io_;
  tcp::acceptor acceptor_;
  std::uint16_t port_ = 0;
};

std::mutex serverMutex;
Server* server = nullptr;  // never destroyed (see sources())
bool serverTried = false;

}  // namespace

int registerMetrics(const std::string& addr, std::uint16_t port, std::function<MetricSnapshot()> snapshot) {
  {
    std::lock_guard<std::mutex> lock(serverMutex);
    if (!serverTried) {
      serverTried = true;
      try {
        server = new Server(addr, port);
        TIERCC_LOG(Info, Init) << "metrics on http://" << addr << ":" << server->port() << "/metrics";
      } catch (const std::exception& e) {
        TIERCC_LOG(Warn, Init) << "no metrics endpoint: could not listen on " << addr << ":" << port << " (" << e.what()
                               << ")";
      }
    }
  }
  Sources& s = sources();
  std::lock_guard<std::mutex> lock(s.mutex);
  const int handle = s.next++;
  s.byHandle.emplace(handle, std::move(snapshot));
  return handle;
}

void unregisterMetrics(int handle) {
  Sources& s = sources();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.byHandle.erase(handle);
}

std::uint16_t metricsPort() {
  std::lock_guard<std::mutex> lock(serverMutex);
  return server ? server->port() : 0;
}

}  // namespace tiercc
