// ExecGate's slow paths (see exec_gate.hpp).
#include "runtime/exec_gate.hpp"

#include "core/membarrier.hpp"

namespace tiercc {

// Where membarrier is not offered, a lone thread's plain stores could not be fenced: shared.
ExecGate::ExecGate() : shared_(!membarrier::registerProcess()) {}

bool ExecGate::enterSlowly() {
  if (!shared_.load(std::memory_order_acquire)) {
    std::thread::id none;
    if (!owner_.compare_exchange_strong(none, std::this_thread::get_id()))
      share();  // not the first thread
    else if (tryEnterAlone())
      return true;  // the first thread: the gate is its own
  }
  if (tryEnter()) return false;
  std::unique_lock<std::mutex> lock(mutex_);
  // Counted before the predicate's second try: a leave that does not see the count has left
  // before that try (both orders are sequentially consistent).
  waiters_.fetch_add(1);
  idle_.wait(lock, [&] { return tryEnter(); });
  waiters_.fetch_sub(1);
  return false;
}

// A second thread: marks the gate shared, then waits until the owner is outside. The fence
// makes the mark seen by an owner that enters after it, or the owner's being inside seen here;
// an owner that sees the mark wakes us as it leaves (leaveAlone).
void ExecGate::share() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (shared_.load(std::memory_order_relaxed)) return;  // another thread did
  shared_.store(true, std::memory_order_release);
  membarrier::fenceEveryRegisteredProcess();
  idle_.wait(lock, [&] { return !alone_.load(std::memory_order_acquire); });
}

bool ExecGate::waitIdle(std::chrono::milliseconds limit) {
  std::unique_lock<std::mutex> lock(mutex_);
  waiters_.fetch_add(1);
  // The owner may be inside with plain stores: the fence makes it seen, or our count seen by its leave.
  if (!shared_.load(std::memory_order_acquire)) membarrier::fenceEveryRegisteredProcess();
  const bool idle =
      idle_.wait_for(lock, limit, [&] { return !running_.load() && !alone_.load(std::memory_order_acquire); });
  waiters_.fetch_sub(1);
  return idle;
}

// A waiter is in its predicate or in wait(): under the mutex, the wake-up is not lost.
void ExecGate::wake() {
  std::lock_guard<std::mutex> lock(mutex_);
  idle_.notify_all();
}

}  // namespace tiercc
