#include "python/src/c10d_store.hpp"

#include <algorithm>
#include <thread>

#include <tiercc/error.hpp>

namespace tiercc::torch {

C10dStore::C10dStore(c10::intrusive_ptr<c10d::Store> store) : store_(std::move(store)) {
  if (!store_) throw Error(ErrorCode::InvalidArgument, "tiercc: the c10d store is null");
}

// A c10d store reports a lost server as c10::Error or std::runtime_error; tiercc's callers
// expect Error, whose code says a peer (here: the store's host, usually rank 0) is gone.
template <typename F>
auto C10dStore::call(const char* what, const std::string& key, F&& f) -> decltype(f()) {
  try {
    std::lock_guard<std::mutex> lock(mutex_);
    return f();
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(ErrorCode::PeerFailure, std::string("c10d store ") + what + " '" + key + "': " + e.what());
  }
}

void C10dStore::set(const std::string& key, const Bytes& value) {
  call("set", key, [&] { store_->set(key, value); });
}

Bytes C10dStore::get(const std::string& key, Deadline deadline) {
  waitUntilPresent({key}, deadline);
  return call("get", key, [&] { return store_->get(key); });
}

std::int64_t C10dStore::add(const std::string& key, std::int64_t delta) {
  return call("add", key, [&] { return store_->add(key, delta); });
}

void C10dStore::wait(const std::vector<std::string>& keys, Deadline deadline) { waitUntilPresent(keys, deadline); }

bool C10dStore::check(const std::vector<std::string>& keys) {
  return call("check", keys.empty() ? std::string() : keys.front(), [&] { return store_->check(keys); });
}

void C10dStore::erase(const std::string& key) {
  call("erase", key, [&] { store_->deleteKey(key); });
}

// Polls with a backoff from 100 us to 10 ms: a rendezvous whose keys arrive together finishes in
// well under a millisecond, and a long wait costs about a hundred store calls a second.
void C10dStore::waitUntilPresent(const std::vector<std::string>& keys, Deadline deadline) {
  auto pause = std::chrono::microseconds(100);
  while (!check(keys)) {
    if (deadline.expired()) {
      std::string names;
      for (const std::string& k : keys) names += (names.empty() ? "'" : ", '") + k + "'";
      throw Error(ErrorCode::Timeout, "timed out waiting for " + names + " in the c10d store");
    }
    // remaining() is milliseconds::max() for "never", which would overflow as microseconds.
    const std::chrono::milliseconds left = deadline.remaining();
    std::this_thread::sleep_for(left < std::chrono::hours(1) ? std::min<std::chrono::microseconds>(pause, left) : pause);
    pause = std::min<std::chrono::microseconds>(pause * 2, std::chrono::milliseconds(10));
  }
}

}  // namespace tiercc::torch
