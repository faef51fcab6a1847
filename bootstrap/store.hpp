// tiercc's own bootstrap Stores (the interface is public: tiercc/store.hpp).
// Implementations: InProcessStore (threads of one process), TcpStore (client of TcpStoreServer),
// PrefixStore (a namespace inside another store).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tiercc/deadline.hpp"
#include "tiercc/store.hpp"

namespace tiercc {

/// A view of `base` in which every key is prefixed with `prefix` (e.g. "comm3/").
class PrefixStore final : public Store {
 public:
  PrefixStore(std::shared_ptr<Store> base, std::string prefix);
  void set(const std::string& key, const Bytes& value) override;
  Bytes get(const std::string& key, Deadline deadline) override;
  std::int64_t add(const std::string& key, std::int64_t delta) override;
  void wait(const std::vector<std::string>& keys, Deadline deadline) override;
  bool check(const std::vector<std::string>& keys) override;
  void erase(const std::string& key) override;

 private:
  std::vector<std::string> prefixed(const std::vector<std::string>& keys) const;
  std::shared_ptr<Store> base_;
  std::string prefix_;
};

/// A store living in this process; safe for concurrent use by many threads.
std::shared_ptr<Store> makeInProcessStoreImpl();

/// A client of a TcpStoreServer at host:port. Connecting retries until connectDeadline
/// (the server may start after the client). Thread-safe: calls are serialised.
/// A server that goes away turns every call into Error{PeerFailure} naming the store address;
/// one that does not answer a request that waits for no key (set, add, check, erase) within
/// `requestTimeout` (default 60 s) turns it into Error{Timeout}. A non-empty `secret` is
/// presented on connecting (the server's must match); a server that refuses it is InvalidArgument.
std::shared_ptr<Store> connectTcpStore(const std::string& host, std::uint16_t port, Deadline connectDeadline,
                                       std::chrono::milliseconds requestTimeout = std::chrono::milliseconds::max(),
                                       const std::string& secret = {});

/// Parses "host:port" (IPv4, hostname or "[v6]:port"); InvalidArgument on anything else, port
/// 0 included unless `anyPort` (an address to bind, where 0 asks the kernel for a free port).
void parseHostPort(const std::string& text, std::string& host, std::uint16_t& port, bool anyPort = false);

/// The TCP store server (Boost.Asio), serving on its own thread until destroyed.
/// Binds to 127.0.0.1 unless given another address; port 0 picks a free port.
/// Frames: a 4-byte length then the request; frames over kMaxFrameBytes or malformed
/// requests get an error reply and the connection is closed.
class TcpStoreServer {
 public:
  static constexpr std::uint32_t kMaxFrameBytes = 64u << 20;
  /// What one client may take of the server, so that a broken or hostile one cannot take it
  /// down: a frame's memory is allocated as its bytes arrive, not when it is announced.
  struct Limits {
    std::size_t maxConnections = 16384;              ///< more are accepted and closed at once
    std::chrono::milliseconds frameTime{30000};      ///< a frame begun must arrive whole this soon
    std::size_t maxUnreadReplyBytes = 256u << 20;    ///< replies a client leaves unread, queued
    std::size_t maxKeyBytes = 4096;                  ///< longer keys are refused
    std::size_t maxValueBytes = 16u << 20;           ///< larger values are refused
    /// Keys and values held, each entry counted with kEntryOverheadBytes more: a SET or ADD
    /// past it is refused and changes nothing.
    std::size_t maxTotalBytes = std::size_t(1) << 30;
    std::chrono::milliseconds authTime{10000};  ///< with a secret: a new connection must present it this soon
  };
  /// What an entry costs beyond its key and value, so that empty keys cannot grow the map unbounded.
  static constexpr std::size_t kEntryOverheadBytes = 64;
  explicit TcpStoreServer(const std::string& bindAddress = "127.0.0.1", std::uint16_t port = 0);
  /// With a non-empty `secret`, every connection must present it first (a HELLO); others are
  /// answered with an error and closed, and change nothing.
  TcpStoreServer(const std::string& bindAddress, std::uint16_t port, const Limits& limits,
                 const std::string& secret = {});
  ~TcpStoreServer();
  TcpStoreServer(const TcpStoreServer&) = delete;
  TcpStoreServer& operator=(const TcpStoreServer&) = delete;
  /// The port actually bound.
  std::uint16_t port() const;
  /// Stops serving and closes every connection (clients then see PeerFailure).
  void stop();

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace tiercc
