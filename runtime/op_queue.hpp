// OpQueue: runs a communicator's operations one at a time and in issue order, either on its
// worker thread (async calls, which return a Work) or inline on the caller's thread (blocking
// calls, which first let earlier async operations finish).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime/exec_gate.hpp"
#include "runtime/flight_recorder.hpp"
#include "tiercc/tiercc.hpp"

namespace tiercc {

struct Work::State {
  std::mutex mutex;
  std::condition_variable cv;
  bool done = false;
  std::exception_ptr error;
  void finish(std::exception_ptr e);
};

class OpQueue {
 public:
  OpQueue() = default;
  ~OpQueue();
  /// Queues fn for the worker thread (started on first use); `call` says what it is while it waits.
  Work submit(std::function<void()> fn, const QueuedCall& call);
  /// The operations waiting, oldest first (not the one running).
  std::vector<QueuedCall> queued() const;
  /// Runs fn on this thread after every queued operation has finished. A template: the call
  /// path of a blocking collective allocates nothing.
  template <class Fn>
  void runInline(Fn&& fn) {
    // Without async work in flight (the usual case) the queue's lock is not needed: an async
    // call issued earlier by this thread raised `outstanding_` before it returned.
    if (outstanding_.load(std::memory_order_acquire) != 0) {
      std::unique_lock<std::mutex> lock(mutex_);
      cv_.wait(lock, [&] { return queue_.empty() && !busy_; });
    }
    ExecGate::Hold exec(exec_);
    fn();
  }
  /// Waits until no operation runs, at most `limit`; false if one still does. Not from inside an
  /// operation (it would wait for itself).
  bool waitIdle(std::chrono::milliseconds limit) { return exec_.waitIdle(limit); }
  /// Lets queued operations finish, then stops the worker thread.
  void shutdown();

 private:
  void workerLoop();

  mutable std::mutex mutex_;
  std::condition_variable cv_;
  struct Item {
    std::function<void()> fn;
    std::shared_ptr<Work::State> state;
    QueuedCall call;
  };
  std::deque<Item> queue_;
  bool busy_ = false;  // the worker is running an operation
  std::atomic<int> outstanding_{0};  // submitted and not yet finished (queued or running)
  bool stopping_ = false;
  ExecGate exec_;  // one operation at a time, worker or inline
  std::thread worker_;
};

}  // namespace tiercc
