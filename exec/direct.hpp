// Direct (single- and zero-copy) collectives inside one domain: instead of staging data through
// the windows, ranks read each other's buffers, mapped (symmetric memory from allocShared: zero
// copy) or through cross-memory attach (ordinary buffers: one copy). Every rank publishes a
// descriptor of its buffers and of the call in its mailbox and raises Staged; every rank reads
// every descriptor and takes the same decision, so a call either runs direct on all ranks or
// staged on all, and fails on all alike when the ranks disagree on the call.
#pragma once

#include <cstdint>

#include "exec/context.hpp"
#include "scaleup-emu/symmetric_memory.hpp"

namespace tiercc {

enum class DirectPath { Staged, Symmetric, CrossMemory };

/// What every rank of the domain must pass alike: the reads of peers' buffers are sized from
/// this rank's arguments, so a peer that disagrees would be read out of bounds.
struct CallShape {
  std::uint64_t bytes = 0;  ///< the call's size column (what directWorthTrying is asked about)
  std::int32_t dt = 0;      ///< DataType
  std::int32_t op = -1;     ///< ReduceOp; -1 for collectives without one
  std::int32_t root = -1;   ///< global rank; -1 for collectives without one
  bool operator==(const CallShape&) const = default;
};

/// What one rank says about its buffers for one call, in its mailbox.
struct BufferDescriptor {
  static constexpr std::uint32_t kSendSymmetric = 1, kRecvSymmetric = 2, kCrossMemory = 4, kInPlace = 8;
  std::uint32_t epoch = 0;
  std::uint32_t flags = 0;
  SymmetricRef send, recv;                   ///< where the buffers lie in the symmetric heap
  std::uint64_t sendAddr = 0, recvAddr = 0;  ///< their addresses in the owner's process
  CallShape shape;
  bool has(std::uint32_t f) const { return (flags & f) != 0; }
};

/// One direct call: the descriptor round, the agreed path, reads of peers' buffers, and the
/// final barrier (a rank returns only when no peer reads its buffers any more).
class DirectCall {
 public:
  /// Publishes this rank's descriptor (round `epoch`, flag Staged) and waits for every peer's;
  /// InvalidArgument, the same on every rank and before any peer's buffer is read, when a rank
  /// passed another shape than local rank 0 (or is not in this direct round at all).
  DirectCall(CollContext& ctx, const CallShape& shape, const void* send, std::size_t sendBytes, const void* recv,
             std::size_t recvBytes);

  BufferDescriptor of(int peer) const;
  /// True when `ok(peer, descriptor)` holds for every rank.
  template <typename Pred>
  bool all(Pred ok) const {
    for (int p = 0; p < ctx_.domain.size(); ++p)
      if (!ok(p, of(p))) return false;
    return true;
  }
  /// Symmetric when `readable(peer, descriptor)` (the buffers peers read are symmetric) holds for
  /// every rank; else cross-memory attach when allowed and every rank can; else Staged.
  template <typename Pred>
  DirectPath choose(Pred readable, bool crossMemoryAllowed) {
    if (all(readable)) return decided(DirectPath::Symmetric);
    if (crossMemoryAllowed && all([](int, const BufferDescriptor& d) { return d.has(BufferDescriptor::kCrossMemory); }))
      return decided(DirectPath::CrossMemory);
    return decided(DirectPath::Staged);
  }

  /// Peer's buffers mapped here (Symmetric path only).
  const std::byte* peerSend(int peer) const;
  std::byte* peerRecv(int peer) const;
  /// Copies `len` bytes at `offset` of peer's send / receive buffer into dst (one copy either
  /// way) and counts them as scale-up bytes.
  void copyFromSend(int peer, std::size_t offset, void* dst, std::size_t len);
  void copyFromRecv(int peer, std::size_t offset, void* dst, std::size_t len);

  /// Starts a pipelined round: its waits get a deadline of their own (TIERCC_TIMEOUT), as
  /// beginRound gives every staged round.
  void renewDeadline();
  /// Ends the round and waits (with a fresh deadline) until every peer has finished reading
  /// this rank's buffers.
  void finish();
  /// Ends the round without running anything (the staged algorithm runs next).
  void abandon();

  std::uint32_t epoch() const { return epoch_; }
  /// Takes `n` rounds' worth of epochs (n >= 1) for flags raised once per round: returns the
  /// first (this call's); the call ends at the last, so the next call starts after it.
  std::uint32_t claimEpochs(std::uint32_t n);
  DirectPath path() const { return path_; }

 private:
  DirectPath decided(DirectPath path);  // records (TierStats::scaleUpPath) and logs (TRACE, COLL) the agreed path
  void requireSameShape() const;        // the descriptor round's check, on every rank alike
  void copyFrom(int peer, bool fromSend, std::size_t offset, void* dst, std::size_t len);
  CollContext& ctx_;
  std::uint32_t epoch_ = 0;
  DirectPath path_ = DirectPath::Staged;
};

/// Whether a call of `bytes` (the collective's size column) should try the direct round: one
/// domain of several ranks, large enough, and a direct path possible at all (symmetric memory
/// allocated, or cross-memory attach from `crossMemoryMinBytes` on). The same answer on every rank.
bool directWorthTrying(CollContext& ctx, std::size_t bytes, std::size_t crossMemoryMinBytes);
/// The same question for the domain's part of a collective that also crosses domains (the
/// hierarchical allreduce): any number of domains. The same answer on every rank of the domain.
bool directWorthTryingInDomain(CollContext& ctx, std::size_t bytes, std::size_t crossMemoryMinBytes);

/// Cross-memory attach pays a system call and page pinning per read: an allreduce goes direct
/// on ordinary buffers only from this size on (measured: docs/performance.md).
inline constexpr std::size_t kCrossMemoryMinReduce = 1 << 20;

/// Reduces [base, base + n elements) of every domain rank's send buffer into dst, this rank's
/// own data (`own`, which may alias dst) first, then local ranks me + 1, me + 2, ...
void reduceOwnFirst(CollContext& ctx, DirectCall& call, const std::byte* own, std::size_t base, std::byte* dst,
                    std::size_t n, DataType dt, ReduceOp op);

/// Records that this call moves data through the windows (TierStats::scaleUpPath "staged") and
/// returns false: what a direct collective answers when the staged algorithm must run.
bool runsStaged(CollContext& ctx);

/// The direct collectives: true when the call ran direct, false when the caller must run the
/// staged algorithm (every rank gets the same answer).
bool directAllreduce(CollContext& ctx, const void* send, void* recv, std::size_t count, DataType dt, ReduceOp op);
bool directAllgather(CollContext& ctx, const void* send, void* recv, std::size_t blockCount, DataType dt);
bool directAlltoall(CollContext& ctx, const void* send, void* recv, std::size_t blockCount, DataType dt);
bool directBroadcast(CollContext& ctx, const void* send, void* recv, std::size_t count, DataType dt, int root);
bool directReduceScatter(CollContext& ctx, const void* send, void* recv, std::size_t blockCount, DataType dt,
                         ReduceOp op);
bool directReduce(CollContext& ctx, const void* send, void* recv, std::size_t count, DataType dt, ReduceOp op,
                  int root);

}  // namespace tiercc
