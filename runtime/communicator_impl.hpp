// Communicator::Impl: what a communicator owns once initialised (store view, topology, the two
// tiers, scratch space, statistics) and the entry points the public API and C ABI call.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "exec/context.hpp"
#include "plan/selector.hpp"
#include "runtime/op_queue.hpp"
#include "runtime/rank_info.hpp"
#include "tiercc/tiercc.hpp"

namespace tiercc {

class FailureDetector;
class Store;
class TcpStoreServer;

/// How a communicator is being created: from scratch, or as a split of a parent.
struct CommSetup {
  std::shared_ptr<Store> baseStore;
  std::shared_ptr<TcpStoreServer> hostedServer;  ///< set on the rank that hosts the store
  std::string storeAddr;                         ///< host:port of a TCP store (empty: in-process)
  std::string prefix;                            ///< store namespace of this communicator
  std::string jobId;                             ///< empty: rank 0 makes one
  int rank = 0;
  int size = 0;
  std::optional<int> forcedDomain;  ///< a split keeps its parent's domains
};

class Communicator::Impl {
 public:
  explicit Impl(CommSetup setup);
  ~Impl();

  /// *impl, or InvalidArgument naming `call` for an empty communicator (moved from, or split
  /// with a negative color).
  static Impl& live(const std::unique_ptr<Impl>& impl, const char* call) {
    if (!impl)
      fail(ErrorCode::InvalidArgument, call, " on an empty communicator (moved from, or split with a negative color)");
    return *impl;
  }

  const Topology& topology() const { return topo_; }
  std::string transportName() const { return transport_ ? transport_->name() : "none"; }
  TierStats stats() const;
  std::string tierModelDescription() const {
    return "scale-up " + tierModel_.scaleUp.describe() + "; scale-out " + tierModel_.scaleOut.describe() + " (" +
           tierModelSource_ + ")";
  }
  void abort();
  bool aborted() const { return aborted_.load(); }
  std::unique_ptr<Impl> split(int color, int key);

  /// A collective's body, borrowed for the length of the call: unlike std::function, it never
  /// allocates (a blocking call runs a few hundred nanoseconds; an allocation is a tenth of it).
  class BodyRef {
   public:
    template <class Fn, class = std::enable_if_t<!std::is_same_v<std::remove_cvref_t<Fn>, BodyRef>>>
    BodyRef(Fn&& fn)  // NOLINT(google-explicit-constructor): a view of any callable
        : fn_(const_cast<void*>(static_cast<const void*>(&fn))),
          call_([](void* f, CollContext& ctx) { (*static_cast<std::remove_reference_t<Fn>*>(f))(ctx); }) {}
    void operator()(CollContext& ctx) const { call_(fn_, ctx); }

   private:
    void* fn_;
    void (*call_)(void*, CollContext&);
  };

  /// Runs a collective in order with the others: inline (blocking) or on the worker (async).
  void runBlocking(const char* name, BodyRef body);
  Work runAsync(const char* name, std::function<void(CollContext&)> body);
  /// Runs a send (isSend) or receive with `peer`, in order with the collectives.
  void runPointToPoint(bool isSend, int peer, BodyRef body);
  /// Symmetric memory (runtime/symmetric_calls.cpp): collective over the communicator.
  void* allocShared(std::size_t bytes);
  void freeShared(void* p);

 private:
  void initTiers();
  void execute(const char* name, std::uint64_t seq, BodyRef body);
  void writeStatsFile() const;
  void failed(const Error& e);
  void startFailureDetector();
  /// The failure detector's verdict: this communicator stops, and its waits end now.
  void peerFailed(int rank, const std::string& why);
  void exitRendezvous();

  CommSetup setup_;
  std::shared_ptr<Store> store_;  // prefixed view for this communicator
  std::chrono::milliseconds timeout_;
  Topology topo_;
  std::unique_ptr<Domain> domain_;
  std::unique_ptr<Transport> transport_;
  Scratch scratch_;
  Tuning tuning_;
  AlgoOverrides algoOverrides_;                            // TIERCC_ALGO
  TierModel tierModel_;                                    // what the cost model assumes of the tiers
  std::string tierModelSource_ = "configured";             // ... and where it came from (TIERCC_TUNE_PROBE)
  std::unique_ptr<Selector> selector_;                     // built once the topology is known
  std::unique_ptr<LinkModel> scaleUpLink_, scaleOutLink_;  // this rank's links; unpaced by default
  std::uint32_t epoch_ = 0;
  std::string callName_;                   // the running operation's name ("allreduce #12"): reused, no allocation
  std::atomic<std::uint64_t> nextSeq_{0};  // assigned at issue, so async calls keep their order
  std::uint64_t splitCount_ = 0;
  std::vector<std::uint64_t> sendSeq_, recvSeq_;  // per peer: messages sent / received so far
  mutable std::mutex statsMutex_;
  TierStats stats_;
  std::atomic<bool> aborted_{false};
  std::exception_ptr brokenBy_;  // the error that stopped this communicator, if any
  std::atomic<bool> broken_{false};  // brokenBy_ is set: lets every call check without the lock
  std::unique_ptr<FailureDetector> detector_;
  OpQueue queue_;  // shut down first in ~Impl, so queued work finishes while the tiers exist
};

}  // namespace tiercc
