// One client connection of the store server (see tcp_store_server.cpp): reads frames in chunks,
// answers them in order, holds the client to the server's limits, and closes on malformed input.
// Internal to bootstrap/, used on the server's io thread only.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "bootstrap/store_server_state.hpp"

namespace tiercc::store_server {

/// "host:port", IPv6 hosts in brackets.
std::string describe(const tcp::endpoint& endpoint);

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

}  // namespace tiercc::store_server
