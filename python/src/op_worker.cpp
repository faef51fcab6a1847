#include "python/src/op_worker.hpp"

#include <condition_variable>
#include <deque>
#include <future>
#include <mutex>

namespace tiercc::torch {

struct OpWorker::State {
  struct Entry {
    std::string what;
    std::chrono::milliseconds timeout;
    Job job;
  };
  OnOverdue onOverdue;
  std::mutex mutex;
  std::condition_variable wake;      // the worker: a job arrived, or stop
  std::condition_variable watching;  // the watchdog: a job started or ended, or stop
  std::deque<Entry> queue;
  bool stopping = false;
  // The running job, for the watchdog.
  std::string running;
  std::chrono::milliseconds runningTimeout{0};
  Clock::time_point runningDeadline = Clock::time_point::max();
  std::uint64_t started = 0;  // jobs started so far: tells the watchdog which one it timed
  std::thread worker, watchdog;
};

namespace {

void runJobs(const std::shared_ptr<OpWorker::State>& s) {
  std::unique_lock<std::mutex> lock(s->mutex);
  for (;;) {
    s->wake.wait(lock, [&] { return s->stopping || !s->queue.empty(); });
    if (s->queue.empty()) return;  // stopping, and everything queued has run
    auto entry = std::move(s->queue.front());
    s->queue.pop_front();
    s->running = entry.what;
    s->runningTimeout = entry.timeout;
    s->runningDeadline = entry.timeout == std::chrono::milliseconds::max() ? OpWorker::Clock::time_point::max()
                                                                           : OpWorker::Clock::now() + entry.timeout;
    ++s->started;
    s->watching.notify_all();
    lock.unlock();
    entry.job();  // jobs report their own errors (to their Work)
    entry = {};   // drops what the job held before the next one starts
    lock.lock();
    s->runningDeadline = OpWorker::Clock::time_point::max();
    s->watching.notify_all();
  }
}

void watchDeadlines(const std::shared_ptr<OpWorker::State>& s) {
  std::unique_lock<std::mutex> lock(s->mutex);
  std::uint64_t reported = 0;
  while (!s->stopping) {
    if (s->runningDeadline == OpWorker::Clock::time_point::max() || reported == s->started) {
      s->watching.wait(lock);
      continue;
    }
    const std::uint64_t job = s->started;
    if (s->watching.wait_until(lock, s->runningDeadline) == std::cv_status::timeout && job == s->started &&
        OpWorker::Clock::now() >= s->runningDeadline) {
      reported = job;
      const std::string what = s->running;
      const auto timeout = s->runningTimeout;
      lock.unlock();
      s->onOverdue(what, timeout);
      lock.lock();
    }
  }
}

}  // namespace

OpWorker::OpWorker(OnOverdue onOverdue) : state_(std::make_shared<State>()) {
  state_->onOverdue = std::move(onOverdue);
  state_->worker = std::thread(runJobs, state_);
  state_->watchdog = std::thread(watchDeadlines, state_);
}

OpWorker::~OpWorker() {
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->stopping = true;
  }
  state_->wake.notify_all();
  state_->watching.notify_all();
  for (std::thread* t : {&state_->worker, &state_->watchdog}) {
    if (t->get_id() == std::this_thread::get_id())
      t->detach();  // our own thread: it returns once this job ends, holding the state
    else
      t->join();
  }
}

void OpWorker::post(std::string what, std::chrono::milliseconds timeout, Job job) {
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->queue.push_back({std::move(what), timeout, std::move(job)});
  }
  state_->wake.notify_one();
}

void OpWorker::runAndWait(std::string what, Job job) {
  std::promise<void> done;
  std::future<void> result = done.get_future();
  post(std::move(what), std::chrono::milliseconds::max(), [&] {
    try {
      job();
      done.set_value();
    } catch (...) {
      done.set_exception(std::current_exception());
    }
  });
  result.get();
}

}  // namespace tiercc::torch

