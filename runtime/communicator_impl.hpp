// Communicator::Impl: what a communicator owns once initialised (store view, topology, the two
// tiers, scratch space, statistics) and the entry points the public API and C ABI call.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/biased_mutex.hpp"
#include "core/errors.hpp"
#include "core/fault_injection.hpp"
#include "exec/call.hpp"
#include "plan/selector.hpp"
#include "runtime/flight_recorder.hpp"
#include "runtime/metrics.hpp"
#include "runtime/op_queue.hpp"
#include "runtime/rank_info.hpp"
#include "runtime/tier_model.hpp"
#include "runtime/trace_writer.hpp"
#include "tiercc/tiercc.hpp"

namespace tiercc {

class FailureDetector;
class Store;
class TcpStoreServer;

/// How a communicator is being created: from scratch, or as a split or shrink of a parent.
struct CommSetup {
  std::shared_ptr<Store> baseStore;
  std::shared_ptr<TcpStoreServer> hostedServer;  ///< set on the rank that hosts the store
  std::string storeAddr;                         ///< host:port of a TCP store (empty: in-process)
  std::string storeSecret;                       ///< what the TCP store requires of a connection
  std::string prefix;                            ///< store namespace of this communicator
  std::string jobId;                             ///< empty: rank 0 makes one
  int rank = 0;
  int size = 0;
  std::optional<int> forcedDomain;  ///< a split or shrink keeps its parent's domains
};

/// An asynchronous call's arguments with the arrays it points to, owned by the call.
struct OwnedCall {
  CallArgs args;
  std::vector<std::size_t> sendCounts, sendDispls, recvCounts, recvDispls;
};

class Communicator::Impl {
 public:
  explicit Impl(CommSetup setup);
  ~Impl();

  /// *impl, or InvalidArgument naming `call` for an empty communicator (moved from, or split
  /// with a negative color).
  static Impl& live(const std::unique_ptr<Impl>& impl, const char* call) {
    if (!impl)
      fail(ErrorCode::InvalidArgument, call, " on an empty communicator (moved from, split with a negative color, or left out by a shrink)");
    return *impl;
  }

  const Topology& topology() const { return topo_; }
  std::string transportName() const { return transport_ ? transport_->name() : "none"; }
  std::string scaleUpName() const { return domain_->name(); }
  std::string scaleOutEndpoint() const { return transport_ ? transport_->endpoint() : "none (one rank)"; }
  TierStats stats() const;
  std::string tierModelDescription() const {
    return "scale-up " + tierModel_.scaleUp.describe() + "; scale-out " + tierModel_.scaleOut.describe() +
           "; cross-memory " + tierModel_.crossMemory.describe() + "; cache " + std::to_string(tierModel_.cacheBytes) +
           " B; window " + std::to_string(windowBytes_) + " B per rank (" +
           (window_.asked ? "TIERCC_SHM_CHUNK" : "auto") + ") (" + tierModelSource_ + ")";
  }
  void abort();
  bool aborted() const { return aborted_.load(); }
  std::unique_ptr<Impl> split(int color, int key);
  std::unique_ptr<Impl> shrink(Communicator::Shrink which);

  /// Runs a collective in order with the others: inline (blocking) or on the worker (async,
  /// with arrays the call owns: an all-to-allv's counts need not outlive the call).
  void runBlocking(const char* name, const CallArgs& args);
  Work runAsync(const char* name, std::shared_ptr<const OwnedCall> call);
  /// Runs a send (args.coll == Send) or receive with args.peer, in order with the collectives.
  void runPointToPoint(const CallArgs& args);
  /// Symmetric memory (runtime/symmetric_calls.cpp): collective over the communicator.
  void* allocShared(std::size_t bytes);
  void freeShared(void* p);

 private:
  void initTiers();  // init_tiers.cpp
  /// The job's id and this communicator's prefix, hashed: names its segments and dumps apart
  /// from other communicators' of the job.
  std::string name() const;
  /// Runs an operation, queued at `queuedAt` (cycle-clock ticks; 0: run as it was issued).
  void execute(const char* name, std::uint64_t seq, std::uint64_t queuedAt, const CallArgs& args);
  void executeCall(const char* name, std::uint64_t seq, const CallArgs& args);
  /// Writes the call that just ended, and its steps, to the timeline.
  void traceCall(const char* name, std::uint64_t seq, const CallArgs& args, std::int64_t begunNs, bool ok);
  void run(ExecContext& ctx, const CallArgs& args);
  /// What the planner is asked for `args`.
  Request requestFor(const CallArgs& args) const;
  /// Adds a finished call's counts to the statistics and the metrics.
  void record(const CallStats& call, Collective coll, std::uint64_t ticks);
  /// What /metrics shows of this communicator now.
  MetricSnapshot metricsSnapshot() const;
  void writeStatsFile() const;
  /// Stops the communicator after `e`. `agreed`: every rank raises it alike (AgreedError), so no
  /// verdict is published.
  void failed(const Error& e, bool agreed = false);
  /// `local` with the failure verdict of the rank that failed first, when that was another rank.
  Error withRootCause(const Error& local) const;
  /// A timeout in collective `seq` with what every rank's progress says of it: the rank that has
  /// not entered it, or that entered another call (hang_diagnosis.hpp).
  Error withDiagnosis(const Error& timeout, std::uint64_t seq, const CallArgs& args) const;
  /// Writes the flight recorder to its file (TIERCC_FLIGHT_RECORDER_DIR), saying why.
  void dumpFlightRecorder(const std::string& reason) const;
  void startFailureDetector();
  /// The failure detector's verdict: this communicator stops, and its waits end now.
  void peerFailed(int rank, const std::string& why);
  /// Another rank's published failure verdict: the same, naming the root cause.
  void verdictHeard(const std::string& verdict);
  /// Tells the store, once, that this rank has stopped on a failure (lingerForSurvivors).
  void countStopped();
  /// On the rank that hosts the store, when the communicator failed: keeps the store up, bounded,
  /// until every other survivor has stopped too, so that none loses the verdict with the store.
  void lingerForSurvivors();
  /// The store stopped answering the failure detector: its host (a rank, or the launcher) failed.
  void storeLost(const std::string& why);
  /// "rank 0 (domain 0, local rank 0), which hosts the bootstrap store at H:P" or, hosted by a
  /// launcher, "the bootstrap store at H:P".
  std::string storeHostName() const;
  /// Stops this communicator with `e` (unless it stopped already) and wakes its waits.
  void stopWith(const Error& e);
  void exitRendezvous();

  CommSetup setup_;
  std::shared_ptr<Store> store_;  // prefixed view for this communicator
  std::chrono::milliseconds timeout_;
  Topology topo_;
  std::unique_ptr<Domain> domain_;
  std::unique_ptr<Transport> transport_;
  Scratch scratch_;
  ExecState exec_;                                         // the executor's reusable state
  std::optional<FaultInjection> fault_;                    // TIERCC_FAULT, when it names this rank
  CallStats callStats_;                                    // the running call's counts (capacity reused)
  std::size_t oneShotLimitBytes_ = 0;                      // TIERCC_ALLREDUCE_ONESHOT_BYTES
  int knomialRadix_ = 2;                                   // TIERCC_KNOMIAL_RADIX
  std::uint32_t pipelineSlots_ = 0;                        // TIERCC_PIPELINE_SLOTS (0: the cost model's)
  WindowSetting window_;                                   // TIERCC_SHM_CHUNK(_MAX): the staging window asked
  std::size_t windowBytes_ = 0;                            // the domain's (what plans are cut to)
  std::size_t railMessageBytes_ = 0;                       // the transport's preference (Request)
  const SymmetricMemory* symmetric_ = nullptr;             // the domain's symmetric heap, if it has one
  AlgoOverrides algoOverrides_;                            // TIERCC_ALGO
  std::optional<Path> pathOverride_;                       // TIERCC_PATH
  TierModel tierModel_;                                    // what the cost model assumes of the tiers
  std::string tierModelSource_ = "configured";             // ... and where it came from (TIERCC_TUNE_PROBE)
  std::unique_ptr<Selector> selector_;                     // built once the topology is known
  std::unique_ptr<LinkModel> scaleUpLink_, scaleOutLink_;  // this rank's links; unpaced by default
  std::uint32_t epoch_ = 0;
  std::string callName_;                   // the running operation's name ("allreduce #12"): reused, no allocation
  std::atomic<std::uint64_t> nextSeq_{0};  // assigned at issue, so async calls keep their order
  std::uint64_t splitCount_ = 0;
  std::uint64_t shrinkCount_ = 0;
  std::vector<std::uint64_t> sendSeq_, recvSeq_;  // per peer: messages sent / received so far
  mutable BiasedMutex statsMutex_;                // record() takes its biased side, at every call
  /// What the calls so far moved (stats() turns it into TierStats): no strings, so that
  /// recording a call allocates and copies nothing but counters.
  struct Totals {
    std::uint64_t collectives = 0, scaleUpBytes = 0, scaleOutBytes = 0, scaleOutBoundBytes = 0;
    Algorithm algorithm = Algorithm::Hierarchical;  // of the last call
    Path path = Path::Staged;
    struct Step {
      StepKind kind;
      Tier tier;
      StepCount counts;
    };
    std::vector<Step> lastSteps;
  } totals_;
  MetricCounts metrics_;        // under statsMutex_, like totals_
  std::uint64_t recorded_ = 0;  // calls recorded (the executing thread's)
  double secondsPerTick_ = 0;   // of the cycle clock, refreshed by record()
  int metricsHandle_ = 0;       // the /metrics registration (metrics_server.hpp)
  int hostIndex_ = 0;           // this rank's index among the ranks on its host (its metrics port offset)
  std::atomic<bool> aborted_{false};
  std::exception_ptr brokenBy_;      // the error that stopped this communicator, if any
  std::atomic<bool> broken_{false};  // brokenBy_ is set: lets every call check without the lock
  mutable std::atomic<bool> verdictOwn_{false};  // this rank is publishing, or has published, the verdict
  std::unique_ptr<FailureDetector> detector_;
  // The detector's connection, whose requests time out within the heartbeat timeout: the verdict
  // and the progress go through it, so that a stalled store cannot hold up a failing rank.
  std::shared_ptr<Store> quickStore_;
  int storeHostRank_ = -1;  // the rank whose process hosts the store (it said so at init), -1: none
  std::chrono::milliseconds heartbeatPeriod_{0};  // how stale a peer's published progress may be
  std::chrono::milliseconds heartbeatTimeout_{0};  // 0: no failure detector
  std::atomic<bool> stopCounted_{false};           // countStopped() has run
  std::unique_ptr<FlightRecorder> recorder_;      // before the queue: queued work records into it
  int dumpSignal_ = 0;                            // the SIGUSR1 registration (signal_dump.hpp)
  std::unique_ptr<TraceWriter> trace_;            // TIERCC_TRACE: the timeline, null when off
  OpQueue queue_;  // shut down first in ~Impl, so queued work finishes while the tiers exist
};

}  // namespace tiercc
