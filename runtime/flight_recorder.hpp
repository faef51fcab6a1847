// The flight recorder: a communicator's last N operations (TIERCC_FLIGHT_RECORDER=N, on by
// default), each with its call, its state (queued, running step k of m, done, failed) and, while
// it runs, the rank and tier it waits on. It is dumped as JSON when an operation times out or
// fails and on SIGUSR1 (signal_dump.hpp), and it is where the progress each rank publishes comes
// from. Recording costs a short uncontended lock three times per operation; the step and the wait
// are relaxed stores the executor makes into live() (exec/context.hpp).
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "exec/call.hpp"
#include "exec/context.hpp"
#include "plan/plan.hpp"
#include "plan/topology.hpp"
#include "runtime/progress.hpp"

namespace tiercc {

class FlightRecorder {
 public:
  /// `capacity` 0 keeps no ring, but progress is still tracked.
  explicit FlightRecorder(std::size_t capacity);

  /// An operation was issued (in issue order). `seq` is the collective sequence number, or the
  /// pair's message number for send/recv. Returns the id later calls name it by.
  std::uint64_t queued(std::uint64_t seq, const CallArgs& args);
  /// It starts running (the executor puts the plan it runs in live()).
  void started(std::uint64_t id);
  void ended(std::uint64_t id, bool ok);

  /// Where the executor writes the running operation's step and wait.
  LiveState& live() { return live_; }
  /// The progress this rank publishes: the last collective entered and completed.
  Progress progress() const;
  /// The ring as JSON, oldest first, with who this rank is and why it was dumped.
  std::string json(const Topology& topo, const std::string& comm, const std::string& reason) const;
  std::size_t capacity() const { return ring_.size(); }

 private:
  struct Entry {
    std::uint64_t id = 0;  // 0: empty
    std::uint64_t seq = 0;
    CallSignature call;
    int peer = -1;  // send/recv
    OpState state = OpState::Queued;
    const Plan* plan = nullptr;  // the selector's (it keeps every plan it made)
    std::uint32_t step = 0;      // the last step it ran (when it ended)
    std::int64_t queuedMs = 0, startedMs = 0, endedMs = 0;
  };
  Entry* find(std::uint64_t id);

  mutable std::mutex mutex_;
  std::vector<Entry> ring_;
  std::uint64_t nextId_ = 1;
  LiveState live_;
  // Progress of the collectives (send/recv have a sequence of their own per peer).
  struct {
    std::int64_t entered = -1, completed = -1, completedAtMs = 0;
    CallSignature current;
    OpState state = OpState::Done;
  } progress_;
};

/// The signature of a call (what its ranks must agree on).
CallSignature signatureOf(const CallArgs& args);

}  // namespace tiercc
