// The store server's data (see tcp_store_server.cpp): the key/value map, with its limits, and the
// GET and WAIT requests parked until their keys come or their timers fire. Internal to bootstrap/,
// used on the server's io thread only.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

// After <utility>: Boost 1.74's awaitable.hpp uses std::exchange without including it.
#include <boost/asio.hpp>

#include "bootstrap/store.hpp"
#include "bootstrap/store_protocol.hpp"

namespace tiercc::store_server {

namespace asio = boost::asio;
namespace proto = store_protocol;
using asio::ip::tcp;
using boost::system::error_code;

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

}  // namespace tiercc::store_server
