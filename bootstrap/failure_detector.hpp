// The store as a failure detector: every rank bumps a heartbeat counter in the store, and
// watches a few peers' counters (its neighbours: the caller chooses them so that every rank is
// watched by someone; O(ranks) store traffic, not O(ranks^2)). A rank whose counter stops moving
// (stopped, hung, or its machine gone) is declared failed, so that waits on it end now with
// PeerFailure naming it, instead of at their deadline. The watcher publishes that verdict
// (failure_verdict.hpp), and every detector looks for a verdict at each beat, so the ranks that
// do not watch the failed one hear of it within a period. A rank that leaves cleanly says goodbye
// and is never suspected.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace tiercc {

class Store;

class FailureDetector {
 public:
  /// Called once, from the detector's thread, with the failed rank and why.
  using OnFailure = std::function<void(int rank, const std::string& why)>;
  /// Called once, from the detector's thread, with another rank's published failure verdict.
  using OnVerdict = std::function<void(const std::string& verdict)>;
  /// What each beat carries after its count (the rank's progress: runtime/progress.hpp).
  using Status = std::function<std::string()>;
  /// Called once, from the detector's thread, when the store itself stops answering (its host
  /// died, stopped or is unreachable): every rank's heartbeat is lost with it.
  using OnStoreLost = std::function<void(const std::string& why)>;

  /// Starts beating and watching the ranks in `watched`. `store` must be private to this
  /// communicator and should be a connection of its own (a heartbeat must not wait behind a long
  /// blocking call).
  FailureDetector(std::shared_ptr<Store> store, int rank, std::vector<int> watched, std::chrono::milliseconds period,
                  std::chrono::milliseconds timeout, OnFailure onFailure, OnVerdict onVerdict, Status status = {},
                  OnStoreLost onStoreLost = {});
  /// How long the detector's store calls may take before the store counts as lost: what is left
  /// of the heartbeat timeout after a period (give the detector's connection this request timeout).
  static std::chrono::milliseconds storeWait(std::chrono::milliseconds period, std::chrono::milliseconds timeout) {
    return std::max(timeout - period, period);
  }
  /// The value a beat wrote for a rank, split: its count (-1: said goodbye) and the status text.
  static std::int64_t beatCount(const std::string& value);
  static std::string beatStatus(const std::string& value);
  /// The key a rank beats under, in the communicator's namespace.
  static std::string beatKey(int rank);
  /// Each watched peer that is still watched, with the seconds since its count last moved.
  std::vector<std::pair<int, double>> heartbeatAges() const;
  /// Says goodbye (peers stop watching this rank) and stops the thread.
  ~FailureDetector();
  FailureDetector(const FailureDetector&) = delete;
  FailureDetector& operator=(const FailureDetector&) = delete;

 private:
  void run();
  void beat();
  void watch();
  void lookForVerdict();

  std::shared_ptr<Store> store_;
  const int rank_;
  const std::chrono::milliseconds period_, timeout_;
  OnFailure onFailure_;
  OnVerdict onVerdict_;
  Status status_;
  OnStoreLost onStoreLost_;
  std::int64_t beats_ = 0;
  bool verdictHeard_ = false;
  struct Peer {
    int rank = -1;
    std::int64_t lastValue = -1;
    std::chrono::steady_clock::time_point lastChange;
    bool gone = false;  // said goodbye, or already reported
  };
  std::vector<Peer> peers_;
  mutable std::mutex peersMutex_;  // lastChange and gone, which heartbeatAges() reads from other threads
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace tiercc
