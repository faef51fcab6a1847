// What the executor runs plans on: the two tiers through their interfaces, the topology, the
// scratch space a communicator keeps, and the counts it keeps per step.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/fault_injection.hpp"
#include "core/link_model.hpp"
#include "plan/plan.hpp"
#include "plan/topology.hpp"
#include "scaleup-emu/domain.hpp"
#include "tiercc/deadline.hpp"
#include "transport/transport.hpp"

namespace tiercc {

struct CallShape;

/// Domain flags as the executor uses them (each rank owns one of each).
enum DomainFlag : int {
  kFlagStaged = 0,    ///< this rank's input for the round is readable (in its window, or its descriptor)
  kFlagReduced = 1,   ///< this rank's pieces of the round are final, where its peers read them
  kFlagReleased = 2,  ///< this rank has finished reading its peers for the round
};

/// Memory that is never read before it is written, so it is not zeroed: its pages are first
/// touched by the step that uses them. (Zero-filling 8 MiB per rank at init cost a 256-rank job
/// on 2 cores a quarter of its start-up time, in page faults.)
class ScratchBuffer {
 public:
  void allocate(std::size_t bytes) {
    bytes_ = std::make_unique_for_overwrite<std::byte[]>(bytes);
    size_ = bytes;
  }
  std::byte* data() { return bytes_.get(); }
  std::size_t size() const { return size_; }

 private:
  std::unique_ptr<std::byte[]> bytes_;
  std::size_t size_ = 0;
};

/// Buffers allocated once per communicator and reused: no allocation per call. Sizes:
/// plan.hpp's accumulateBytes and receiveBytes of the window.
struct Scratch {
  ScratchBuffer accumulate;  ///< partials being reduced, packed messages
  ScratchBuffer receive;     ///< what arrives from other ranks
  /// The last round was one-shot on alternating buffers and saw every domain peer's Staged
  /// flag: a one-shot round next may skip waiting for Released (one_shot.cpp). Every other
  /// round clears it.
  bool afterOneShot = false;
  /// The last round was a one-shot broadcast or reduce on alternating buffers: its writers knew
  /// every peer had finished the rounds whose buffers they reused, but the ranks did not all wait
  /// on each other. Such a round next may skip waiting for Released; any other waits
  /// (one_shot.cpp).
  bool afterRootedOneShot = false;
  /// The size of the fast-box slots that one-shot rounds have used since the last beginRound
  /// (0: none has staged in the mailboxes since): every slot's epoch word is then valid to poll,
  /// and another size must begin afresh (one_shot.cpp).
  std::size_t mailboxSlot = 0;
  /// Every domain peer has finished every round before this epoch, as far as this rank has seen
  /// (learnPeersFinishedBefore, exec/round.hpp): a one-shot broadcast's or reduce's writer reuses
  /// a fast box or window half without waiting while it holds.
  std::uint32_t peersFinishedBefore = 0;
  /// One-shot rounds that skipped beginRound since the last one. Capped (one_shot.cpp), so that
  /// every rank passes beginRound at least every 2^30 rounds: the epochs above, and those in the
  /// fast boxes' words, are then never so old that a 32-bit comparison would take them for new.
  std::uint32_t roundsSinceBegin = 0;
};

/// What one step of one call moved, and the time the executor spent in it.
struct StepCount {
  std::uint64_t scaleUpBytes = 0;
  std::uint64_t scaleOutBytes = 0;
  std::uint64_t ticks = 0;  ///< of the cycle clock (core/cycle_clock.hpp)
};

/// What one call did: the plan that ran, its steps' counts, and this rank's share of the bound.
struct CallStats {
  const Plan* plan = nullptr;
  std::vector<StepCount> steps;  ///< one per plan step (capacity kept across calls)
  std::uint64_t scaleOutBoundBytes = 0;
};

/// What a rank is doing right now, for the flight recorder and the progress it publishes: written
/// by the executing thread at each step and wait (relaxed stores, a few a step), read by others as
/// a snapshot.
struct LiveState {
  std::atomic<std::uint32_t> step{0};       ///< index of the plan step running
  std::atomic<std::int32_t> waitingOn{-1};  ///< the rank this rank waits on, -1: none
  std::atomic<std::uint8_t> waitTier{0};    ///< ... and on which tier (a Tier)
  std::atomic<const Plan*> plan{nullptr};   ///< the plan running (the selector keeps its plans);
                                            ///< stored with release: readers look inside it

  void waiting(int rank, Tier tier) {
    waitTier.store(static_cast<std::uint8_t>(tier), std::memory_order_relaxed);
    waitingOn.store(rank, std::memory_order_relaxed);
  }
  void done() { waitingOn.store(-1, std::memory_order_relaxed); }
};

/// One part of a step as it ran, for the timeline (TIERCC_TRACE): steady-clock nanoseconds, and
/// the bytes it moved.
struct StepSpan {
  std::uint32_t step;
  std::int32_t fragment;  ///< -1: a step run once for the whole call
  bool wait;              ///< completing transfers the step posted earlier
  std::int64_t beginNs, endNs;
  std::uint64_t scaleUpBytes, scaleOutBytes;
};
/// The spans of the call running (cleared by its owner between calls; capacity kept).
struct StepTrace {
  std::vector<StepSpan> spans;
  static std::int64_t now() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
};

struct ExecContext {
  const Topology& topo;
  Domain& domain;
  Transport* transport;  ///< null when there is only one rank
  Scratch& scratch;
  std::uint32_t& epoch;  ///< round counter shared by the ranks of the domain
  CallStats& stats;
  std::uint64_t seq;                     ///< this call's sequence number (the same on every rank)
  const std::string& what;               ///< "allreduce #12", the start of every error message
  Deadline deadline;                     ///< of the current round: renewed by every round and flat step
  LinkModel* scaleUpLink = nullptr;      ///< paces tier 0 (TIERCC_EMU_SCALEUP_*); null: not paced
  LinkModel* scaleOutLink = nullptr;     ///< paces tier 1 sends (TIERCC_EMU_SCALEOUT_*); null: not paced
  std::chrono::milliseconds timeout{0};  ///< TIERCC_TIMEOUT: each round's waits get this long
  StepCount* current = nullptr;          ///< the step running now, which movedUp counts into
  LiveState* live = nullptr;             ///< null: nobody looks
  StepTrace* trace = nullptr;            ///< null: no timeline (TIERCC_TRACE unset)
  const CallShape* shape = nullptr;      ///< this call's, as stamped for the peers (exec/call_stamp.hpp)
  std::uint32_t tagSalt = 0;             ///< 16 bits of the shape's fingerprint, folded into message tags
  const FaultInjection* fault = nullptr;  ///< TIERCC_FAULT, when it names this rank; null: none

  /// This rank has read `bytes` from its domain peers: counts them for the current step and,
  /// with a link model, blocks until the modelled scale-up link would have carried them.
  void movedUp(std::size_t bytes) {
    current->scaleUpBytes += bytes;
    if (scaleUpLink && bytes) scaleUpLink->charge(bytes);
  }
  /// A fresh deadline for the waits of one round or step: a long call that keeps moving never
  /// times out.
  void renewDeadline() {
    if (timeout.count() > 0) deadline = Deadline::afterCoarse(timeout);
  }
};

}  // namespace tiercc
