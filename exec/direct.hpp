// The direct paths' agreement (inside one domain): instead of staging data through the windows,
// ranks read each other's buffers, mapped (symmetric memory from allocShared: zero copy) or
// through cross-memory attach (ordinary buffers: one copy). Every rank publishes a descriptor
// of its buffers and of the call in its mailbox and raises Staged; every rank reads every
// descriptor and takes the same decision, so a call takes one path on all ranks of the domain,
// and fails on all alike when the ranks disagree on the call.
#pragma once

#include <cstdint>
#include <vector>

#include "exec/call_shape.hpp"
#include "exec/context.hpp"
#include "scaleup-emu/symmetric_memory.hpp"

namespace tiercc {

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

/// One call's direct round: the descriptors, the agreed path, and reads of peers' buffers.
class DirectRound {
 public:
  /// Publishes this rank's descriptor (a new round: flag Staged) and waits for every peer's;
  /// InvalidArgument, the same on every rank and before any peer's buffer is read, when a rank
  /// passed another shape than local rank 0 (or is not in this direct round at all).
  void agree(ExecContext& ctx, const CallShape& shape, const void* send, std::size_t sendBytes, const void* recv,
             std::size_t recvBytes);
  /// Whether every rank of the domain can take `path` with the buffers it passed, given what
  /// the plan reads of them (Plan::directNeeds).
  bool possible(Path path, std::uint32_t needs, int rootLocal) const;
  /// Takes `path` for the rest of the call, with `rounds` epochs (one per fragment, >= 1):
  /// returns the first.
  std::uint32_t take(Path path, std::uint32_t rounds);
  /// Ends the round without running anything (the staged plan runs next).
  void abandon();
  /// Ends the call: waits (with a fresh deadline) until every peer has finished reading this
  /// rank's buffers.
  void close();

  Path path() const { return path_; }
  /// Peers' buffers mapped here (ZeroCopy only).
  const std::byte* peerSend(int peer) const;
  std::byte* peerRecv(int peer) const;
  /// Copies `len` bytes at `offset` of peer's send (or receive) buffer into dst, one copy on
  /// either path, and counts them as scale-up bytes.
  void read(int peer, bool fromSend, std::size_t offset, void* dst, std::size_t len);

 private:
  const BufferDescriptor& of(int peer) const { return descriptors_[static_cast<std::size_t>(peer)]; }
  ExecContext* ctx_ = nullptr;
  std::vector<BufferDescriptor> descriptors_;  // every local rank's, read once per call
  std::uint32_t epoch_ = 0;
  Path path_ = Path::Staged;
};

}  // namespace tiercc
