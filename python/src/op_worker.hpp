// Runs a process group's operations one at a time, in the order they were issued, on a thread of
// its own (c10d's asynchronous contract), and watches the running one's deadline: an operation
// past it makes the worker call onOverdue, which aborts the communicator so that the operation
// ends, instead of leaving the job to hang.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

namespace tiercc::torch {

class OpWorker {
 public:
  using Clock = std::chrono::steady_clock;
  using Job = std::function<void()>;
  /// Called from the watchdog thread, once, with the overdue operation's name and its timeout.
  using OnOverdue = std::function<void(const std::string& what, std::chrono::milliseconds timeout)>;

  explicit OpWorker(OnOverdue onOverdue);
  /// Runs what is queued, then stops. Safe on the worker's own thread (a job that drops the last
  /// reference to its owner): the threads then finish on their own.
  ~OpWorker();
  OpWorker(const OpWorker&) = delete;
  OpWorker& operator=(const OpWorker&) = delete;

  /// Queues job; `timeout` counts from when it starts (milliseconds::max(): no deadline).
  void post(std::string what, std::chrono::milliseconds timeout, Job job);
  /// Runs job on the worker after everything queued before it, and waits for it (rethrows).
  void runAndWait(std::string what, Job job);

  struct State;

 private:
  std::shared_ptr<State> state_;  // shared with the threads, which may outlive this object
};

}  // namespace tiercc::torch
