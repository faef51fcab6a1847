// The TCP scale-out backend: one Boost.Asio socket per peer, made non-blocking and driven by
// one poll(2) loop, so that any number of sends and receives progress together (a pairwise
// exchange of large messages cannot deadlock) and a waiting rank sleeps in the kernel.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "transport/transport.hpp"

namespace tiercc {

/// Listens before the address is published, so that peers can connect as soon as they read it.
class TcpListener {
 public:
  /// Binds `address` (an interface address such as 127.0.0.1) on a free port.
  explicit TcpListener(const std::string& address);
  ~TcpListener();
  /// "address:port" for peers to connect to.
  std::string endpoint() const;

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct TcpTransportConfig {
  int rank = 0;
  std::vector<int> peers;                        ///< ranks this rank exchanges messages with
  std::function<std::string(int)> peerEndpoint;  ///< rank -> "host:port" it listens on
  std::function<std::string(int)> peerName;      ///< rank -> "rank 5 (domain 1, local rank 1)"
  Deadline setupDeadline{Clock::time_point::max()};
};

class TcpTransport final : public Transport {
 public:
  /// Connects to every peer: the lower rank of each pair connects, the higher one accepts.
  TcpTransport(TcpListener& listener, TcpTransportConfig config);
  ~TcpTransport() override;

  const char* name() const override { return "tcp"; }
  void isend(TransferOp& op) override;
  void irecv(TransferOp& op) override;
  void wait(const std::vector<TransferOp*>& ops, Deadline deadline, const std::string& what) override;
  void abort() override;

  struct Connection;

 private:
  Connection& connection(int peer, const char* op);
  void progress(Connection& c);
  void poison(Connection& c, const std::string& why);

  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace tiercc
