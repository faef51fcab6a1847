// The in-process Store: one map behind a mutex, for ranks that are threads of one process
// (tests, single-node runs). Waiters sleep on a condition variable until a write or the deadline.
#include <condition_variable>
#include <mutex>

#include "core/errors.hpp"
#include "bootstrap/store.hpp"
#include "bootstrap/store_protocol.hpp"

namespace tiercc {
namespace {

namespace proto = store_protocol;

class InProcessStore final : public Store {
 public:
  void set(const std::string& key, const Bytes& value) override {
    {
      std::lock_guard lock(mutex_);
      data_[key] = value;
    }
    changed_.notify_all();
  }

  Bytes get(const std::string& key, Deadline deadline) override {
    std::unique_lock lock(mutex_);
    waitForKeys(lock, {key}, deadline);
    return data_.at(key);
  }

  std::int64_t add(const std::string& key, std::int64_t delta) override {
    std::int64_t result = 0;
    {
      std::lock_guard lock(mutex_);
      result = proto::addToCounter(data_, key, delta);
    }
    changed_.notify_all();
    return result;
  }

  void wait(const std::vector<std::string>& keys, Deadline deadline) override {
    std::unique_lock lock(mutex_);
    waitForKeys(lock, keys, deadline);
  }

  bool check(const std::vector<std::string>& keys) override {
    std::lock_guard lock(mutex_);
    return proto::missingKeys(data_, keys).empty();
  }

  void erase(const std::string& key) override {
    std::lock_guard lock(mutex_);
    data_.erase(key);
  }

 private:
  // Returns with the lock held once every key exists; Timeout naming the missing ones otherwise.
  void waitForKeys(std::unique_lock<std::mutex>& lock, const std::vector<std::string>& keys, Deadline deadline) {
    auto waited = deadline.remaining();
    auto present = [&] { return proto::missingKeys(data_, keys).empty(); };
    if (deadline.at() == Clock::time_point::max()) {
      changed_.wait(lock, present);
      return;
    }
    if (!changed_.wait_until(lock, deadline.at(), present)) {
      throw Error(ErrorCode::Timeout, proto::timeoutMessage(waited, proto::missingKeys(data_, keys)));
    }
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  proto::KeyValueMap data_;
};

}  // namespace

std::shared_ptr<Store> makeInProcessStoreImpl() { return std::make_shared<InProcessStore>(); }


}  // namespace tiercc
