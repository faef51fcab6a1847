// The flight recorder: a communicator's last N operations (TIERCC_FLIGHT_RECORDER=N, on by
// default), each with its call, its state (running step k of m, done, failed) and, while it
// runs, the rank and tier it waits on; the operations still queued come from the op queue. It is
// dumped as JSON when an operation times out or fails and on SIGUSR1 (signal_dump.hpp), and it
// is where the progress each rank publishes comes from.
//
// Only the thread running operations writes it (they run one at a time); the heartbeat and
// dump threads read it. So entries and progress are sequence-locked (core/seq_lock.hpp), not
// guarded by a mutex: recording an operation is a few plain stores at each end, and the step and
// wait are relaxed stores the executor makes into live() (exec/context.hpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/seq_lock.hpp"
#include "exec/call.hpp"
#include "exec/context.hpp"
#include "plan/plan.hpp"
#include "plan/topology.hpp"
#include "runtime/progress.hpp"

namespace tiercc {

/// An operation waiting in the op queue, as the recorder's dump shows it.
struct QueuedCall {
  std::uint64_t seq = 0;
  CallSignature call;
  int peer = -1;
  std::uint64_t queuedAt = 0;  ///< cycle-clock ticks
};

class FlightRecorder {
 public:
  /// `capacity` 0 keeps no ring, but progress is still tracked.
  explicit FlightRecorder(std::size_t capacity);

  /// An operation starts running: `seq` is the collective sequence number, or the pair's message
  /// number for send/recv; times are cycle-clock ticks (core/cycle_clock.hpp). Returns its id.
  std::uint64_t began(std::uint64_t seq, const CallArgs& args, std::uint64_t queuedAt, std::uint64_t startedAt);
  void ended(std::uint64_t id, bool ok, std::uint64_t endedAt);

  /// Where the executor writes the running operation's step and wait.
  LiveState& live() { return live_; }
  /// The progress this rank publishes: the last collective entered and completed.
  Progress progress() const;
  /// The ring as JSON, oldest first, then `queued`, with who this rank is and why it was dumped.
  std::string json(const Topology& topo, const std::string& comm, const std::string& reason,
                   const std::vector<QueuedCall>& queued) const;
  std::size_t capacity() const { return capacity_; }

 private:
  /// One operation as the dump reads it.
  struct Entry {
    std::uint64_t id = 0;  // 0: empty
    std::uint64_t seq = 0;
    CallSignature call;
    int peer = -1;  // send/recv
    OpState state = OpState::Running;
    std::uint32_t step = 0;                                  // the last step it ran (when it ended)
    const Plan* plan = nullptr;                              // the selector's (it keeps every plan it made)
    std::uint64_t queuedAt = 0, startedAt = 0, endedAt = 0;  // cycle-clock ticks
  };
  /// Where an entry lives: atomics under a sequence lock, so that began() and ended() write only
  /// what changes, with plain stores.
  struct Slot {
    SeqLock lock;
    std::atomic<std::uint64_t> id{0}, seq{0}, count{0}, queuedAt{0}, startedAt{0}, endedAt{0};
    std::atomic<std::uint64_t> call{0};  // CallSignature's enums and the state, packed (packCall)
    std::atomic<std::int64_t> root{-1}, peer{-1};
    std::atomic<std::uint32_t> step{0};
    std::atomic<const Plan*> plan{nullptr};
    Entry read() const;
  };
  /// The progress of the collectives (send/recv number their own messages), the same way.
  struct Collectives {
    SeqLock lock;
    std::atomic<std::int64_t> entered{-1}, completed{-1}, root{-1};
    std::atomic<std::uint64_t> completedAt{0}, count{0}, call{0};
  };
  /// Wall-clock milliseconds of a cycle-clock reading (0 stays 0: never happened).
  std::int64_t wallMs(std::uint64_t ticks) const;

  const std::size_t capacity_;
  std::unique_ptr<Slot[]> ring_;
  std::atomic<std::uint64_t> nextId_{1};
  std::size_t nextSlot_;     // id k goes to slot k % N, counted without a division
  Slot* running_ = nullptr;  // the slot of the operation running (the writer's)
  std::uint64_t runningId_ = 0;
  Collectives collectives_;
  bool collectiveRunning_ = false;  // the writer's: the operation running is a collective
  LiveState live_;
  const std::uint64_t originTicks_;  // a cycle-clock reading and the wall clock at the same moment
  const std::int64_t originWallMs_;
};

/// The signature of a call (what its ranks must agree on).
CallSignature signatureOf(const CallArgs& args);

}  // namespace tiercc
