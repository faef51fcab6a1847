// Work handles and the OpQueue that completes them (see op_queue.hpp).
#include <chrono>

#include "core/errors.hpp"
#include "runtime/op_queue.hpp"

namespace tiercc {

void Work::State::finish(std::exception_ptr e) {
  std::lock_guard<std::mutex> lock(mutex);
  done = true;
  error = std::move(e);
  cv.notify_all();
}

Work::Work() = default;
Work::~Work() = default;
Work::Work(Work&&) noexcept = default;
Work& Work::operator=(Work&&) noexcept = default;
Work::Work(std::shared_ptr<State> state) : state_(std::move(state)) {}

bool Work::test() {
  if (!state_) fail(ErrorCode::InvalidArgument, "Work::test on an empty Work");
  std::lock_guard<std::mutex> lock(state_->mutex);
  if (state_->done && state_->error) std::rethrow_exception(state_->error);
  return state_->done;
}

void Work::wait(std::chrono::milliseconds timeout) {
  if (!state_) fail(ErrorCode::InvalidArgument, "Work::wait on an empty Work");
  std::unique_lock<std::mutex> lock(state_->mutex);
  auto done = [&] { return state_->done; };
  if (timeout >= std::chrono::hours(24 * 365)) {  // "forever": now + timeout would overflow
    state_->cv.wait(lock, done);
  } else if (!state_->cv.wait_for(lock, timeout, done)) {
    fail(ErrorCode::Timeout, "Work::wait: the operation did not finish within ", timeout.count(), " ms");
  }
  if (state_->error) std::rethrow_exception(state_->error);
}

OpQueue::~OpQueue() { shutdown(); }

void OpQueue::shutdown() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    cv_.notify_all();
  }
  if (worker_.joinable()) worker_.join();
}

Work OpQueue::submit(std::function<void()> fn, const QueuedCall& call) {
  auto state = std::make_shared<Work::State>();
  std::lock_guard<std::mutex> lock(mutex_);
  if (!worker_.joinable()) worker_ = std::thread([this] { workerLoop(); });
  queue_.push_back(Item{std::move(fn), state, call});
  outstanding_.fetch_add(1, std::memory_order_acq_rel);
  cv_.notify_all();
  return Work(state);
}

std::vector<QueuedCall> OpQueue::queued() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<QueuedCall> calls;
  for (const Item& item : queue_) calls.push_back(item.call);
  return calls;
}

void OpQueue::workerLoop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and everything queued has run
    auto [fn, state, call] = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    {
      ExecGate::Hold exec(exec_);
      std::exception_ptr error;
      try {
        fn();
      } catch (...) {
        error = std::current_exception();
      }
      // Inside the gate: once waitIdle() (abort) sees the queue idle, the Work is done too.
      state->finish(error);
    }
    lock.lock();
    busy_ = false;
    outstanding_.fetch_sub(1, std::memory_order_acq_rel);
    cv_.notify_all();
  }
}

}  // namespace tiercc
