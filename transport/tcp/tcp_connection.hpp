// One TCP connection of the TCP transport and its wire format. Every message starts with a
// 40-byte header: kind (send or one-sided write), tag or immediate, length, and for writes the
// target region and offset. Receives check tag and length against the posted receive, writes
// check the region's bounds, so a mismatch is reported instead of corrupting memory.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>

#include "tiercc/error.hpp"
#include "transport/transport.hpp"

namespace tiercc::tcpnet {

constexpr std::uint32_t kMagic = 0x32434354;  // "TCC2"
enum class Kind : std::uint32_t { Send = 1, Write = 2 };

struct WireHeader {
  std::uint32_t magic;
  Kind kind;
  std::uint64_t tag;  // send: the tag; write: the immediate
  std::uint64_t len;
  std::uint64_t region;  // write: target region id
  std::uint64_t offset;  // write: byte offset in the region
};
static_assert(sizeof(WireHeader) == 40);

/// What is wrong with a header as it arrived (its magic, its kind), or nullopt; its tag, length
/// and target are checked against the posted receive or the region (tests/fuzz/tcp_wire_fuzz.cpp).
std::optional<std::string> headerFault(const WireHeader& header);

/// Whether [offset, offset + len) lies inside a region of `size` bytes, for any 64-bit values
/// a peer may send (offset + len may overflow; this never computes it).
constexpr bool fitsInRegion(std::uint64_t offset, std::uint64_t len, std::uint64_t size) {
  return offset <= size && len <= size - offset;
}

/// Where incoming one-sided writes land: resolves a region id to memory, or nullptr.
class RegionTable {
 public:
  virtual ~RegionTable() = default;
  virtual std::byte* resolve(std::uint64_t id, std::uint64_t offset, std::uint64_t len) = 0;
};

/// The most queued messages one system call sends (two iovecs each: header and payload), and
/// the most bytes of a batch of more than one (tcp_connection.cpp).
constexpr std::size_t kSendBatch = 16;
constexpr std::size_t kSendBatchBytes = 64 << 10;

struct Outgoing {
  TransferOp* op;
  WireHeader header;
};

struct Connection {
  int peer = -1;
  std::string name;
  std::unique_ptr<boost::asio::ip::tcp::socket> socket;
  std::deque<Outgoing> sends;          // sends and writes, in issue order
  std::size_t txDone = 0;              // bytes of the front message sent, header included
  std::deque<TransferOp*> recvs;       // posted receives
  std::deque<TransferOp*> notifies;    // posted write notifications
  std::deque<std::pair<std::uint32_t, std::uint64_t>> arrived;  // notifications not yet claimed
  WireHeader rx{};
  std::size_t rxHeaderBytes = 0;
  std::size_t rxPayloadDone = 0;
  std::string error;                   // non-empty once poisoned
  ErrorCode errorCode = ErrorCode::TransportError;

  int fd() const { return socket->native_handle(); }
  bool idle() const { return sends.empty() && recvs.empty() && notifies.empty(); }
  /// Moves what the socket takes now, in both directions; poisons itself on a fault.
  void progress(RegionTable& regions);
  void poison(ErrorCode code, const std::string& why);

 private:
  void progressSends();
  void progressReceives(RegionTable& regions);
  void matchNotifications();
};

}  // namespace tiercc::tcpnet
