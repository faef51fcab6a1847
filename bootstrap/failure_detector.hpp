// The store as a failure detector: every rank bumps a heartbeat counter in the store, and
// watches everyone else's. A rank whose counter stops moving (stopped, hung, or its machine
// gone) is declared failed, so that waits on it end now with PeerFailure naming it, instead of
// at their deadline. A rank that leaves cleanly says goodbye and is never suspected.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace tiercc {

class Store;

class FailureDetector {
 public:
  /// Called once, from the detector's thread, with the failed rank and why.
  using OnFailure = std::function<void(int rank, const std::string& why)>;

  /// Starts beating and watching. `store` must be private to this communicator and should be a
  /// connection of its own (a heartbeat must not wait behind a long blocking call).
  FailureDetector(std::shared_ptr<Store> store, int rank, int size, std::chrono::milliseconds period,
                  std::chrono::milliseconds timeout, OnFailure onFailure);
  /// Says goodbye (peers stop watching this rank) and stops the thread.
  ~FailureDetector();
  FailureDetector(const FailureDetector&) = delete;
  FailureDetector& operator=(const FailureDetector&) = delete;

 private:
  void run();
  void beat();
  void watch();

  std::shared_ptr<Store> store_;
  const int rank_, size_;
  const std::chrono::milliseconds period_, timeout_;
  OnFailure onFailure_;
  struct Peer {
    std::int64_t lastValue = -1;
    std::chrono::steady_clock::time_point lastChange;
    bool gone = false;  // said goodbye, or already reported
  };
  std::vector<Peer> peers_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace tiercc
