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

/// One operation at a time, on the worker or inline, and a bounded wait for none to run (abort).
/// Entering a free gate and leaving one that nobody waits on take no lock: one compare-and-swap
/// and one store, which is most of what a blocking collective's call path pays when nothing else
/// runs (the mutex and condition variable are for the waiters only). A mutex and a condition
/// variable rather than std::timed_mutex: its try_lock_for is pthread_mutex_clocklock, which gcc
/// 12's ThreadSanitizer does not see, so every operation would be reported as racing with the
/// abort that waited for it.
class ExecGate {
 public:
  class Hold {
   public:
    explicit Hold(ExecGate& gate) : gate_(gate) { gate_.enter(); }
    ~Hold() { gate_.leave(); }
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;

   private:
    ExecGate& gate_;
  };
  /// Waits until no operation runs, at most `limit`; false if one still does.
  bool waitIdle(std::chrono::milliseconds limit) {
    std::unique_lock<std::mutex> lock(mutex_);
    waiters_.fetch_add(1);
    const bool idle = idle_.wait_for(lock, limit, [&] { return !running_.load(); });
    waiters_.fetch_sub(1);
    return idle;
  }

 private:
  bool tryEnter() {
    bool free = false;
    return running_.compare_exchange_strong(free, true);
  }
  void enter() {
    if (tryEnter()) return;
    std::unique_lock<std::mutex> lock(mutex_);
    // Counted before the predicate's second try: a leave() that does not see the count has
    // released the gate before that try (both orders are sequentially consistent).
    waiters_.fetch_add(1);
    idle_.wait(lock, [&] { return tryEnter(); });
    waiters_.fetch_sub(1);
  }
  void leave() {
    running_.store(false);
    if (waiters_.load() == 0) return;
    std::lock_guard<std::mutex> lock(mutex_);  // a waiter is in its predicate or in wait()
    idle_.notify_all();
  }

  std::mutex mutex_;
  std::condition_variable idle_;
  std::atomic<bool> running_{false};
  std::atomic<int> waiters_{0};
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
