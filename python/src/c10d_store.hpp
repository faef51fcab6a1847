// tiercc's Store interface over the c10d Store that PyTorch hands a backend, so that the
// communicator meets its peers through the job's own rendezvous: no second store, no port.
#pragma once

#include <torch/csrc/distributed/c10d/Store.hpp>

#include <mutex>

#include <tiercc/store.hpp>

namespace tiercc::torch {

class C10dStore final : public tiercc::Store {
 public:
  explicit C10dStore(c10::intrusive_ptr<c10d::Store> store);
  void set(const std::string& key, const Bytes& value) override;
  Bytes get(const std::string& key, Deadline deadline) override;
  std::int64_t add(const std::string& key, std::int64_t delta) override;
  void wait(const std::vector<std::string>& keys, Deadline deadline) override;
  bool check(const std::vector<std::string>& keys) override;
  void erase(const std::string& key) override;

 private:
  // Every call is short: a wait is a loop of check()s, never c10d's blocking get, so that the
  // failure detector's beats never queue behind a rendezvous that takes seconds.
  void waitUntilPresent(const std::vector<std::string>& keys, Deadline deadline);
  template <typename F>
  auto call(const char* what, const std::string& key, F&& f) -> decltype(f());

  c10::intrusive_ptr<c10d::Store> store_;
  std::mutex mutex_;  // c10d stores are not all safe for concurrent calls (PrefixStore over TCPStore is)
};

}  // namespace tiercc::torch
