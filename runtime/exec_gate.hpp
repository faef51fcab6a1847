// ExecGate: one operation of a communicator at a time, on its worker thread or inline on the
// caller's, and a bounded wait for none to run (abort).
//
// While only one thread has ever entered it (the usual case: a caller that makes blocking
// MPI-style calls, or the worker of one that makes only async calls), that thread enters and
// leaves with plain stores. A locked instruction drains the store buffer: with one on each side
// of every call, an 8 B broadcast's root waited at the gate for its own store to the fast box,
// whose cache line the reader held (a third of the root's cycles, on the instruction after the
// exchange that left the gate). The first other thread to enter turns the gate shared for good:
// it marks it so, fences every thread with membarrier (core/membarrier.hpp) and waits until the
// first one is outside; from then on every thread enters with a compare-and-swap and leaves with
// a store, as all did before. waitIdle() fences the same way. A Dekker pair with the fence on
// the rare side, as in BiasedMutex: either the lone thread sees the mark (and goes the shared
// way, waking whoever waits) or the other side sees it inside (and waits for its wake-up). Where
// membarrier is not offered the gate is shared from the start.
//
// A mutex and a condition variable rather than std::timed_mutex: its try_lock_for is
// pthread_mutex_clocklock, which gcc 12's ThreadSanitizer does not see, so every operation would
// be reported as racing with the abort that waited for it.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace tiercc {

class ExecGate {
 public:
  ExecGate();
  ExecGate(const ExecGate&) = delete;
  ExecGate& operator=(const ExecGate&) = delete;

  class Hold {
   public:
    explicit Hold(ExecGate& gate) : gate_(gate), alone_(gate.enter()) {}
    ~Hold() { alone_ ? gate_.leaveAlone() : gate_.leaveShared(); }
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;

   private:
    ExecGate& gate_;
    const bool alone_;  // entered the lone thread's way
  };

  /// Waits until no operation runs, at most `limit`; false if one still does.
  bool waitIdle(std::chrono::milliseconds limit);
  /// Whether a second thread has entered (or membarrier is not offered): tests and logs.
  bool shared() const { return shared_.load(std::memory_order_acquire); }

 private:
  /// Returns true if it entered the lone thread's way.
  bool enter() {
    if (!shared_.load(std::memory_order_relaxed) &&
        owner_.load(std::memory_order_relaxed) == std::this_thread::get_id() && tryEnterAlone())
      return true;
    return enterSlowly();
  }
  /// The owner's way in; false (and outside again) if the gate turned shared meanwhile.
  bool tryEnterAlone() {
    alone_.store(true, std::memory_order_relaxed);
    std::atomic_signal_fence(std::memory_order_seq_cst);  // the CPU's order comes from share()'s membarrier
    if (!shared_.load(std::memory_order_acquire)) return true;
    leaveAlone();
    return false;
  }
  void leaveAlone() {
    alone_.store(false, std::memory_order_release);  // release: what the operation wrote
    std::atomic_signal_fence(std::memory_order_seq_cst);
    if (shared_.load(std::memory_order_relaxed) || waiters_.load(std::memory_order_relaxed) != 0) wake();
  }
  void leaveShared() {
    running_.store(false);
    if (waiters_.load() != 0) wake();
  }
  bool enterSlowly();
  void share();
  bool tryEnter() {
    bool free = false;
    return running_.compare_exchange_strong(free, true);
  }
  void wake();

  std::atomic<bool> shared_;            // a second thread has entered (for good), or no membarrier
  std::atomic<std::thread::id> owner_;  // the first thread that entered
  std::atomic<bool> alone_{false};      // the owner is inside, the lone thread's way
  std::atomic<bool> running_{false};    // someone is inside, the shared way
  std::atomic<int> waiters_{0};         // threads waiting to enter, or in waitIdle()
  std::mutex mutex_;
  std::condition_variable idle_;
};

}  // namespace tiercc
