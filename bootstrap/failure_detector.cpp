// Heartbeats through the store (see failure_detector.hpp). A rank's beat is "<count> <status>"
// under "hb/<rank>", the count rising by one a beat; a goodbye is the value -1; a failure verdict
// lives under kFailureVerdictKey. The store's own errors (server gone) are left to the calls that
// use it: the detector only stops watching.
#include "bootstrap/failure_detector.hpp"

#include <cstdlib>

#include "core/errors.hpp"
#include "core/log.hpp"
#include "bootstrap/failure_verdict.hpp"
#include "bootstrap/store.hpp"

namespace tiercc {
namespace {

std::string key(int rank) { return FailureDetector::beatKey(rank); }

}  // namespace

std::string FailureDetector::beatKey(int rank) { return "hb/" + std::to_string(rank); }

std::int64_t FailureDetector::beatCount(const std::string& value) { return std::strtoll(value.c_str(), nullptr, 10); }

std::string FailureDetector::beatStatus(const std::string& value) {
  const auto space = value.find(' ');
  return space == std::string::npos ? "" : value.substr(space + 1);
}

FailureDetector::FailureDetector(std::shared_ptr<Store> store, int rank, std::vector<int> watched,
                                 std::chrono::milliseconds period, std::chrono::milliseconds timeout,
                                 OnFailure onFailure, OnVerdict onVerdict, Status status, OnStoreLost onStoreLost)
    : store_(std::move(store)),
      rank_(rank),
      period_(period),
      timeout_(timeout),
      onFailure_(std::move(onFailure)),
      onVerdict_(std::move(onVerdict)),
      status_(std::move(status)),
      onStoreLost_(std::move(onStoreLost)) {
  auto now = std::chrono::steady_clock::now();
  for (int r : watched) {
    if (r == rank_) continue;  // not watching ourselves
    Peer p;
    p.rank = r;
    p.lastChange = now;
    peers_.push_back(p);
  }
  beat();
  thread_ = std::thread([this] { run(); });
}

FailureDetector::~FailureDetector() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  try {
    store_->setString(key(rank_), "-1");
  } catch (const std::exception&) {
    // The store may be gone at teardown; peers then stop watching for the same reason.
  }
}

// One write a beat, the count and the status together: watchers compare the count.
void FailureDetector::beat() {
  std::string value = std::to_string(++beats_);
  if (status_) value += " " + status_();
  store_->setString(key(rank_), value);
}

void FailureDetector::watch() {
  auto now = std::chrono::steady_clock::now();
  for (Peer& p : peers_) {
    const int r = p.rank;
    if (p.gone) continue;
    auto moved = [&] {
      std::lock_guard<std::mutex> lock(peersMutex_);
      p.lastChange = now;
    };
    if (!store_->check({key(r)})) {
      // Not started yet: its first beat happens at init, which this rank has passed; a rank
      // still in init is covered by the init deadline.
      moved();
      continue;
    }
    const std::int64_t value = beatCount(store_->getString(key(r), Deadline::after(storeWait(period_, timeout_))));
    if (value < 0) {
      std::lock_guard<std::mutex> lock(peersMutex_);
      p.gone = true;
      continue;
    }
    if (value != p.lastValue) {
      p.lastValue = value;
      moved();
      continue;
    }
    if (now - p.lastChange < timeout_) continue;
    {
      std::lock_guard<std::mutex> lock(peersMutex_);
      p.gone = true;
    }
    auto silent = std::chrono::duration_cast<std::chrono::milliseconds>(now - p.lastChange).count();
    onFailure_(r, concat("stopped answering: no heartbeat in the store for ", silent, " ms (TIERCC_HEARTBEAT_TIMEOUT=",
                         timeout_.count(), "ms; it may be stopped, hung or its host gone)"));
  }
}

std::vector<std::pair<int, double>> FailureDetector::heartbeatAges() const {
  const auto now = std::chrono::steady_clock::now();
  std::vector<std::pair<int, double>> ages;
  std::lock_guard<std::mutex> lock(peersMutex_);
  for (const Peer& p : peers_)
    if (!p.gone) ages.emplace_back(p.rank, std::chrono::duration<double>(now - p.lastChange).count());
  return ages;
}

// One check a beat: cheap, and bounded by the period for every rank, watched or not.
void FailureDetector::lookForVerdict() {
  if (verdictHeard_ || !store_->check({kFailureVerdictKey})) return;
  verdictHeard_ = true;
  onVerdict_(store_->getString(kFailureVerdictKey, Deadline::after(storeWait(period_, timeout_))));
}

void FailureDetector::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!cv_.wait_for(lock, period_, [&] { return stopping_; })) {
    lock.unlock();
    try {
      beat();
      watch();
      lookForVerdict();
    } catch (const std::exception& e) {
      // The store did not answer within storeWait (stopped, or its host hung) or went away:
      // every rank's heartbeat goes with it.
      TIERCC_LOG(Warn, Store) << "failure detector stops: " << e.what();
      lock.lock();
      const bool stopping = stopping_;
      lock.unlock();
      if (!stopping && onStoreLost_) onStoreLost_(e.what());
      return;
    }
    lock.lock();
  }
}

}  // namespace tiercc
