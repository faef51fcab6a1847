// One peer of the ibverbs transport: an RC queue pair and the message protocol on top of it.
//  - every two-sided send emits one header message (SEND) in order, numbered by a per-peer
//    sequence; the receiver matches header n to its n-th receive and checks tag and length;
//  - small messages travel inside the header (eager: copied through registered bounce buffers,
//    or inline); large ones are a rendezvous: the receiver registers its buffer and sends a CTS
//    with addr/rkey as soon as the receive is posted, the sender RDMA-writes into it and sends FIN;
//  - credits: the receiver keeps kCredits + kSlack receive buffers posted; the sender spends one
//    credit per message that consumes a receive (headers, CTS, FIN, write-with-immediate) and
//    learns the receiver's cumulative repost count from every header; a credit-only message
//    (which spends none, hence the slack) goes back once half the credits are owed.
#pragma once

#include <infiniband/verbs.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tiercc/error.hpp"
#include "transport/ibverbs/ib_memory.hpp"
#include "transport/ibverbs/ib_queue_pair.hpp"
#include "transport/transport.hpp"

namespace tiercc::ib {

constexpr std::uint32_t kHeaderMagic = 0x48424954;  // "TIBH"
constexpr std::uint32_t kSlack = 8;                 // receive buffers beyond the credits, for credit-only messages

enum class MsgKind : std::uint32_t { Eager = 1, Rts = 2, Cts = 3, Fin = 4, Credit = 5, Goodbye = 6 };

struct MsgHeader {
  std::uint32_t magic = kHeaderMagic;
  MsgKind kind = MsgKind::Eager;
  std::uint64_t credits = 0;  ///< cumulative count of the receiver-of-this's messages we have reposted
  std::uint64_t tag = 0;
  std::uint64_t len = 0;
  std::uint64_t addr = 0;  ///< CTS: where to write
  std::uint32_t rkey = 0;  ///< CTS
  std::uint32_t seq = 0;   ///< Eager/Rts/Fin: the send's number; Cts: the receive's number
};
static_assert(sizeof(MsgHeader) == 48);

/// What is wrong with a message as it arrived in a receive slot (shorter than its header, bad
/// magic, unknown kind, an eager payload whose length is not what arrived or over eagerLimit),
/// or nullopt; `header` is filled in when the header itself was whole (tests/fuzz/ib_wire_fuzz.cpp).
std::optional<std::string> messageFault(std::span<const std::byte> message, std::size_t eagerLimit, MsgHeader& header);

/// What every connection shares with the transport.
struct Shared {
  ibv_pd* pd = nullptr;
  RegistrationCache* cache = nullptr;
  std::uint32_t credits = 64;
  std::size_t eagerLimit = 8192;
  std::size_t maxChunk = 1u << 30;  ///< largest single RDMA write
  std::size_t slotBytes() const { return sizeof(MsgHeader) + eagerLimit; }
};

/// wr_id layout: bit 63 receive, bits 32..62 connection index, bits 0..31 slot.
constexpr std::uint64_t kRecvBit = 1ull << 63;
inline std::uint64_t makeWrId(bool recv, std::uint32_t conn, std::uint32_t slot) {
  return (recv ? kRecvBit : 0) | (static_cast<std::uint64_t>(conn) << 32) | slot;
}

/// A work request waiting to be posted, in the order the protocol needs.
struct Outgoing {
  bool isWrite = false;
  bool usesCredit = true;       ///< consumes a receive buffer at the peer
  bool finishAtPost = false;    ///< eager send: the data is copied out when posted
  MsgHeader header;             ///< message
  const std::byte* payload = nullptr;
  std::size_t payloadLen = 0;
  std::uint64_t localAddr = 0;  ///< write
  std::uint32_t lkey = 0;
  std::uint64_t remoteAddr = 0;
  std::uint32_t rkey = 0;
  std::uint32_t writeLen = 0;
  bool withImm = false;
  std::uint32_t imm = 0;
  TransferOp* finishes = nullptr;   ///< finished when this work request completes
  std::shared_ptr<IbRegion> hold;   ///< keeps the memory registered until then
};

/// A posted send-queue work request; they complete in posting order on an RC queue pair.
struct Posted {
  int slot = -1;
  bool probe = false;
  TransferOp* finishes = nullptr;
  std::shared_ptr<IbRegion> hold;
};

struct SendState {
  TransferOp* op;
  std::uint32_t seq = 0;
  bool large = false;
  bool isWrite = false;
  bool ctsSeen = false;
  std::shared_ptr<IbRegion> mr;
};

struct RecvState {
  TransferOp* op;
  std::uint32_t seq = 0;
  bool large = false;
  bool headerSeen = false;
  bool finSeen = false;
  std::shared_ptr<IbRegion> mr;
};

struct Unexpected {
  MsgHeader header;
  std::vector<std::byte> payload;
};

class Connection {
 public:
  Connection(Shared& shared, std::uint32_t index, int peer, std::string name);
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  /// Creates the queue pair on `cq`, registers the bounce buffers and posts every receive.
  void create(ibv_cq* cq);
  /// Connects the queue pair to the peer's.
  void connect(const DeviceChoice& choice, std::uint32_t localPsn, const QpAddress& remote, const QpTuning& tuning);
  /// Lets work requests go out: once the peer said its queue pair is connected and its receives
  /// are posted. Until then operations queue here (a peer connected on first use).
  void open() { open_ = true; }
  bool isOpen() const { return open_; }
  ibv_qp* qp() const { return qp_.get(); }

  void isend(TransferOp& op);
  void irecv(TransferOp& op);
  void iwrite(WriteOp& op, const RemoteRegion& remote);
  void inotify(TransferOp& op);

  /// Handles one completion of this connection's queue pair.
  void onCompletion(const ibv_wc& wc);
  /// Posts what credits and queue room allow, returns credits, completes ops in order.
  void pump();
  /// Posts a zero-byte RDMA write: a dead peer turns it into a retry-exceeded error.
  void probe();
  /// Posts a goodbye so that the peer fails its pending operations now.
  void sayGoodbye();

  bool expectsInput() const { return !recvs_.empty() || !notifies_.empty() || !sends_.empty(); }
  /// Nothing left to go out (what waits on a connection never opened cannot).
  bool drained() const { return !open_ || (posted_.empty() && outbox_.empty()); }
  bool probing() const { return probing_; }
  std::chrono::steady_clock::time_point lastHeard() const { return lastHeard_; }
  const std::string& name() const { return name_; }
  int peer() const { return peer_; }

  bool failed() const { return !error_.empty(); }
  const std::string& error() const { return error_; }
  ErrorCode errorCode() const { return errorCode_; }
  /// Fails every pending and later operation with this error; stops the queue pair.
  void poison(ErrorCode code, const std::string& why);
  /// What `op` is waiting for, for timeout messages.
  std::string describePending(const TransferOp& op) const;

 private:
  void onReceive(const ibv_wc& wc, std::uint32_t slot);
  void onSendCompletion(const ibv_wc& wc);
  void onHeader(RecvState& r, const MsgHeader& h, const std::byte* payload);
  void onCts(SendState& s, const MsgHeader& h);
  void queueRendezvousWrites(SendState& s, const MsgHeader& cts);
  RecvState* recvBySeq(std::uint32_t seq);
  void repost(std::uint32_t slot, bool countsAsCredit);
  bool postOne(Outgoing& out, bool bypassCredits);
  void postMessage(MsgKind kind);
  std::uint64_t creditsLeft() const { return shared_.credits - (creditsUsed_ - peerReposted_); }
  void completeInOrder();
  void finish(TransferOp& op);
  void mismatch(const MsgHeader& h, const TransferOp& op, const char* side);

  Shared& shared_;
  std::uint32_t index_;
  int peer_;
  std::string name_;
  QpPtr qp_;
  std::uint32_t sqDepth_ = 0;
  std::uint32_t maxInline_ = 0;
  std::uint32_t sqUsed_ = 0;
  std::vector<std::byte> recvSlab_, sendSlab_;
  MrPtr recvMr_, sendMr_;
  std::vector<int> freeSendSlots_;

  std::deque<Outgoing> outbox_;
  std::deque<Posted> posted_;
  std::deque<SendState> sends_;  // two-sided sends and one-sided writes, in issue order
  std::deque<RecvState> recvs_;
  std::deque<TransferOp*> notifies_;
  std::deque<std::pair<std::uint32_t, std::uint32_t>> arrived_;  // write notifications: imm, bytes
  std::map<std::uint32_t, Unexpected> unexpected_;  // headers that came before their receive
  std::map<std::uint32_t, MsgHeader> earlyCts_;     // CTS that came before their send
  std::uint32_t nextSendSeq_ = 0, nextRecvSeq_ = 0;

  std::uint64_t creditsUsed_ = 0;   // messages we posted that consume a peer receive
  std::uint64_t peerReposted_ = 0;  // the peer's count of those it has reposted
  std::uint64_t reposted_ = 0;      // receives of the peer's credited messages we reposted
  std::uint64_t advertised_ = 0;    // the last `reposted_` we told the peer

  bool open_ = false;
  bool peerGone_ = false;
  bool probing_ = false;
  std::chrono::steady_clock::time_point lastHeard_ = std::chrono::steady_clock::now();
  std::string error_;
  ErrorCode errorCode_ = ErrorCode::TransportError;
};

}  // namespace tiercc::ib
