// The building blocks every step uses: the per-round epoch protocol on the domain's flags, and
// batches of scale-out transfers that are posted together and waited for together.
#pragma once

#include <array>
#include <memory>
#include <vector>

#include "exec/context.hpp"

namespace tiercc {

/// Starts a round that uses the part of the window `inFlight` rounds back used last: waits
/// until every domain peer released that round, and returns this one's epoch (with a fresh
/// deadline). The first round of a call uses inFlight = 1: anything before it may have used
/// the whole window.
std::uint32_t beginRound(ExecContext& ctx, std::uint32_t inFlight = 1);
/// Records that every domain peer has finished every round before `epoch` (a later epoch than
/// the one known replaces it; an earlier one, a fact already known, changes nothing).
inline void learnPeersFinishedBefore(Scratch& s, std::uint32_t epoch) {
  if (static_cast<std::int32_t>(epoch - s.peersFinishedBefore) > 0) s.peersFinishedBefore = epoch;
}
/// True when every domain peer is known to have finished round `epoch` and every one before it.
inline bool peersFinished(const Scratch& s, std::uint32_t epoch) {
  return static_cast<std::int32_t>(s.peersFinishedBefore - epoch) > 0;
}
/// Ends a round: this rank has finished reading its peers' windows.
void endRound(ExecContext& ctx, std::uint32_t epoch);
/// Waits until local rank `peer` has raised `flag` to `epoch` (at once for this rank), then
/// compares its call with this rank's (exec/call_stamp.hpp) unless `compareCalls` is false (the
/// direct round compares its descriptors instead, alike on every rank).
void waitPeer(ExecContext& ctx, int peer, DomainFlag flag, std::uint32_t epoch, bool compareCalls = true);

/// Tag of message `index` of step `step` of fragment `fragment` of this call. Messages between
/// two ranks match in posting order, so a tag only checks that both sides agree: on the call
/// (its sequence number, and its shape's fingerprint: a rank that passed another count, datatype,
/// op or root sends tags its peer does not expect, which the transports refuse as
/// InvalidArgument) and on the place in it. It wraps past 2^32 messages per call, harmlessly.
inline std::uint64_t messageTag(const ExecContext& ctx, std::uint64_t fragment, std::uint64_t step,
                                std::uint64_t index = 0) {
  return (ctx.seq << 32) | ((((fragment << 14) ^ (step << 8) ^ index) ^ ctx.tagSalt) & 0xffffffffu);
}

/// Transport operations posted together; wait() completes them all. Sent bytes are counted
/// when posted, for the step the batch belongs to, on the tier of the peer (same domain:
/// scale-up), and, with a link model, paid in wait(): the batch is one step of the model. A
/// batch is kept and reused (its storage stays), so posting allocates nothing once warm.
class TransferBatch {
 public:
  TransferBatch() = default;
  TransferBatch(const TransferBatch&) = delete;
  TransferBatch& operator=(const TransferBatch&) = delete;

  /// Starts a new batch counting into `counts` (nothing may be pending).
  void begin(ExecContext& ctx, StepCount& counts);
  void send(int peer, std::uint64_t tag, const std::byte* buf, std::size_t len);
  void recv(int peer, std::uint64_t tag, std::byte* buf, std::size_t len);
  /// Posts nothing more; waits for everything posted so far.
  void wait();

 private:
  TransferOp& add(const TransferOp& op);

  ExecContext* ctx_ = nullptr;
  StepCount* counts_ = nullptr;
  std::array<TransferOp, 8> inline_;                 // posted ops must not move
  std::vector<std::unique_ptr<TransferOp[]>> more_;  // beyond the inline ones, 64 at a time
  std::size_t used_ = 0;
  std::vector<TransferOp*> pending_;
  std::size_t sentOut_ = 0;                  // sent across domains since begin(), for the link model
  std::size_t sentInside_ = 0;               // sent to ranks of this domain since begin()
  bool anyOut_ = false, anyInside_ = false;  // a send was posted (it may be empty)
  Clock::time_point firstPost_;              // when this step's transfers began
};

}  // namespace tiercc
