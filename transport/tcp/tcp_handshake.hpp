// How the TCP transport gets exactly one socket per pair of ranks, when it first needs one.
// A rank dials a peer on its first operation with it (or at init, for the peers every plan uses)
// and presents a hello (its rank); the peer answers accept or reject. Both ranks of a pair may
// dial at once, each not knowing of the other's dial: then the lower rank's dial is kept. The
// rule, applied by the rank that reads a hello from `d`:
//   reject when it already has a socket with d, or is itself dialing d and d is the higher rank;
//   accept otherwise, and drop its own dial to d if it had one (d is then the lower rank, which
//   rejects that dial).
// So each rank ends with the same single socket, and no byte of data moves on a socket before
// both ranks have settled on it. Nothing here blocks: progress() moves every handshake as far as
// the sockets allow, and the transport polls pollFds() with its connections.
#pragma once

#include <poll.h>

#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tiercc/error.hpp"

namespace tiercc::tcpnet {

class Handshakes {
 public:
  using Socket = boost::asio::ip::tcp::socket;
  /// A socket both ranks settled on, or the reason a dial to `peer` failed (socket null).
  struct Outcome {
    int peer = -1;
    std::unique_ptr<Socket> socket;
    ErrorCode code = ErrorCode::TransportError;
    std::string error;
  };

  /// `acceptor` listens (non-blocking) for this rank's peers; ranks are 0..worldSize-1.
  Handshakes(boost::asio::io_context& io, boost::asio::ip::tcp::acceptor acceptor, int rank, int worldSize);
  ~Handshakes();

  /// Starts dialing `peer` at `to` unless a socket with it exists or is being dialed. Does not
  /// block: the connect completes in progress(). `name` says who the peer is, for errors.
  void dial(int peer, const boost::asio::ip::tcp::endpoint& to, const std::string& name);
  /// Whether a socket with `peer` was settled on (and handed out by progress()).
  bool settled(int peer) const { return settled_[static_cast<std::size_t>(peer)]; }
  /// Whether this rank dials `peer` now.
  bool dialing(int peer) const;
  /// Accepts new connections and moves every handshake on; returns what settled or failed.
  std::vector<Outcome> progress();
  /// The descriptors to poll for handshakes to move: the listener and every socket in handshake.
  void addPollFds(std::vector<pollfd>& fds) const;
  /// Closes every socket in handshake (abort: peers dialing us see it at once).
  void shutdownAll();
  /// "198.18.1.1:40123": where this rank listens.
  boost::asio::ip::tcp::endpoint listening() const { return acceptor_.local_endpoint(); }

 private:
  struct Dial;
  struct Incoming;
  void acceptNew();
  void progressDial(Dial& d, std::vector<Outcome>& out);
  void progressIncoming(Incoming& in, std::vector<Outcome>& out);

  boost::asio::io_context& io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  const int rank_, worldSize_;
  std::vector<bool> settled_;
  std::vector<std::unique_ptr<Dial>> dials_;
  std::vector<std::unique_ptr<Incoming>> incoming_;
};

}  // namespace tiercc::tcpnet
