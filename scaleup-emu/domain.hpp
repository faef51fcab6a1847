// Tier 0, the scale-up Domain: memory semantics among the ranks of one domain. Each rank
// exposes a Window that its peers map and read or write directly; ranks synchronise through
// monotonically increasing flags (signal / waitUntil) whose waits block instead of spinning.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "tiercc/deadline.hpp"

namespace tiercc {

class Store;
class SymmetricMemory;

class Domain {
 public:
  /// Flags each rank owns; collectives give each a meaning (staged, reduced, released, ...).
  static constexpr int kNumFlags = 8;

  virtual ~Domain() = default;
  virtual const char* name() const = 0;
  virtual int localRank() const = 0;
  virtual int size() const = 0;
  /// The window of local rank `peer`, mapped in this process; windowBytes() long.
  virtual std::byte* window(int peer) = 0;
  virtual std::size_t windowBytes() const = 0;
  /// Publishes this rank's flag `flag` = value (release order) and wakes its waiters.
  virtual void signal(int flag, std::uint32_t value) = 0;
  /// Waits until peer's flag reaches value (acquire order; wrap-around safe). Spins briefly,
  /// then blocks. Throws Timeout at the deadline, PeerFailure if the peer dies, Aborted after
  /// abort(); every message starts with `what` (e.g. "allreduce #12") and names the peer.
  virtual void waitUntil(int peer, int flag, std::uint32_t value, Deadline deadline,
                         const std::string& what) = 0;
  /// Makes current and future waits fail with Aborted.
  virtual void abort() = 0;
  /// A small per-rank slot (kMailboxBytes) outside the window, readable by every peer: a
  /// collective publishes a per-call descriptor there before raising its Staged flag. Null
  /// where the backend has none; it then has neither symmetric memory nor cross-memory attach.
  /// (4608: room for one-shot's fast boxes, eight of 568 B of input or more of less, which a
  /// broadcast's root fills up to that many calls ahead of its readers, exec/one_shot.cpp.)
  static constexpr std::size_t kMailboxBytes = 4608;
  /// Right after the mailbox, as readable and replicated, kCallStampBytes in which a rank stamps
  /// the call it runs, for its peers to compare with theirs (exec/call_stamp.hpp).
  static constexpr std::size_t kCallStampBytes = 64;
  virtual std::byte* mailbox(int /*peer*/) { return nullptr; }
  /// True when a peer's stores to its mailbox show here as they happen, in program order
  /// (shared memory): a reader may then poll a sequence word there instead of waiting for a flag.
  virtual bool mailboxCoherent() const { return false; }

  /// Symmetric memory (zero copy); null when this backend has none.
  virtual SymmetricMemory* symmetric() { return nullptr; }
  /// Collective over the domain (every rank, same size, same order): an allocation every peer
  /// maps; `store` must be private to this domain. NotSupported where symmetric() is null.
  virtual void* allocateSymmetric(Store& store, std::size_t bytes, Deadline deadline);
  /// Every rank of the domain frees its allocations in the same order (no synchronisation:
  /// peers keep their own mappings until they free). InvalidArgument, nothing freed, for a
  /// pointer that is not the start of an allocation.
  virtual void freeSymmetric(void* p);

  /// True when this rank may copy straight out of its peers' processes (cross-memory attach);
  /// the same on every rank of the domain (decided together at init).
  virtual bool crossMemoryAttach() const { return false; }
  /// Copies `bytes` at address `remote` of local rank `peer`'s process into `dst` (single
  /// copy). Throws SystemError naming the peer when the kernel refuses.
  virtual void readPeer(int peer, std::uint64_t remote, void* dst, std::size_t bytes);

  /// Tells the peers that this rank failed: their waits on it fail with PeerFailure quoting
  /// `reason`, instead of waiting for a rank that will not come.
  virtual void poison(const std::string& reason) = 0;
};

}  // namespace tiercc
