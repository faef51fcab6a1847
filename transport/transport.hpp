// Tier 1, the scale-out Transport: messages between ranks of different domains. Two-sided,
// tagged, non-blocking: isend/irecv start an operation, wait() drives progress until the
// given operations complete. Shaped after NCCL's net plugin so that verbs (RC queue pairs),
// UCX and TCP backends fit behind it. A fault poisons the connection: every pending and
// later operation with that peer fails with the same error, naming the peer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/deadline.hpp"

namespace tiercc {

/// One send or receive in flight. Owned by the caller; its buffer must outlive completion.
struct TransferOp {
  int peer = -1;
  bool isSend = false;
  std::uint64_t tag = 0;
  std::byte* buf = nullptr;
  std::size_t len = 0;
  std::size_t doneBytes = 0;  // payload bytes moved so far
  bool headerDone = false;
  bool complete = false;
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual const char* name() const = 0;
  /// Queues a send of op.len bytes to op.peer; completes in order with other ops to that peer.
  virtual void isend(TransferOp& op) = 0;
  /// Queues a receive; messages from a peer match receives in posting order, and the tag and
  /// length must equal the sender's (else TransportError).
  virtual void irecv(TransferOp& op) = 0;
  /// Drives progress until every op in `ops` is complete. Blocks (no busy wait). Throws
  /// Timeout, PeerFailure or TransportError whose message starts with `what` and names the peer.
  virtual void wait(const std::vector<TransferOp*>& ops, Deadline deadline, const std::string& what) = 0;
  /// Fails current and future waits with Aborted.
  virtual void abort() = 0;
};

}  // namespace tiercc
