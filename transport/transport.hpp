// Tier 1, the scale-out Transport: messages between ranks of different domains, shaped after
// NCCL's net plugin so that verbs (RC queue pairs), UCX (ucp) and TCP fit behind it.
//  - two-sided, tagged, non-blocking: isend/irecv start an operation, wait() drives progress;
//  - one-sided: iwrite puts bytes into a peer's registered memory and delivers a 32-bit
//    immediate that completes one of the peer's inotify operations (RDMA WRITE WITH IMM);
//  - registration returns a MemoryRegion whose descriptor() serialises for the peer.
// A fault poisons the connection: every pending and later operation with that peer fails with
// the same error, naming the peer. Waiting blocks (fd, completion channel) after a short spin.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tiercc/deadline.hpp"

namespace tiercc {

using Bytes = std::vector<std::uint8_t>;

/// One operation in flight. Owned by the caller; it and its buffer must outlive completion.
struct TransferOp {
  int peer = -1;
  bool isSend = false;
  std::uint64_t tag = 0;      ///< isend/irecv: must match; inotify: receives the immediate
  std::byte* buf = nullptr;
  std::size_t len = 0;        ///< inotify: receives the number of bytes written
  std::size_t doneBytes = 0;  ///< backend progress bookkeeping
  bool headerDone = false;    ///< backend progress bookkeeping
  bool complete = false;
};

/// A one-sided write: op.buf..op.buf+op.len (inside a region registered with this transport)
/// goes to the peer's region described by `remote`, at remoteOffset; the peer is notified
/// with `imm` after the data is in place.
struct WriteOp : TransferOp {
  Bytes remote;                  ///< the peer's MemoryRegion::descriptor()
  std::size_t remoteOffset = 0;
  std::uint32_t imm = 0;
};

/// Memory registered for one-sided access (pinned for verbs, an rkey for UCX, an id for TCP).
class MemoryRegion {
 public:
  virtual ~MemoryRegion() = default;
  virtual std::byte* data() const = 0;
  virtual std::size_t size() const = 0;
  /// What a peer needs to write into this region; exchanged out of band (e.g. the Store).
  virtual Bytes descriptor() const = 0;
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual const char* name() const = 0;
  /// Where this rank's traffic leaves, for tiercc-info and logs: "198.18.1.1:40123 (rail1, ...)".
  virtual std::string endpoint() const = 0;
  /// The largest message worth sending when several share a link at once (0: no preference).
  virtual std::size_t preferredMessageBytes() const { return 0; }

  /// Queues a send of op.len bytes to op.peer; completes in order with other sends to that peer.
  virtual void isend(TransferOp& op) = 0;
  /// Queues a receive; messages from a peer match receives in posting order, and the tag and
  /// length must equal the sender's (else TransportError naming the peer).
  virtual void irecv(TransferOp& op) = 0;

  /// Registers [buf, buf + len) for one-sided writes from peers. Cached: registering a range
  /// inside a live registration returns that registration. The region stays valid while held.
  virtual std::shared_ptr<MemoryRegion> registerMemory(void* buf, std::size_t len) = 0;
  /// Drops cached registrations that overlap [buf, buf + len): call before freeing memory.
  virtual void invalidateMemory(void* buf, std::size_t len) = 0;
  /// Queues a one-sided write (see WriteOp); completes once the data left this rank's buffer.
  virtual void iwrite(WriteOp& op) = 0;
  /// Queues the wait for one write notification from op.peer (in arrival order); on
  /// completion op.tag holds the immediate and op.len the bytes written.
  virtual void inotify(TransferOp& op) = 0;

  /// Drives progress until every op in `ops` is complete. Blocks (no busy wait). Throws
  /// Timeout, PeerFailure or TransportError whose message starts with `what` and names the peer.
  virtual void wait(const std::vector<TransferOp*>& ops, Deadline deadline, const std::string& what) = 0;
  /// Non-blocking: progresses what it can and reports whether `op` is complete (throws like wait).
  virtual bool test(TransferOp& op, const std::string& what) = 0;
  /// Fails current and future waits with Aborted and closes connections so peers notice.
  virtual void abort() = 0;
};

}  // namespace tiercc
