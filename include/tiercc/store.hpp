// The bootstrap Store: the key/value rendezvous ranks meet through at init, with blocking waits
// bounded by deadlines. tiercc brings its own (a TCP store that tiercc-run or rank 0 hosts, and an
// in-process one for threads); a program that already has a store, such as PyTorch's c10d Store,
// implements this interface over it and passes it to Communicator(store, size, rank).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tiercc/deadline.hpp"

namespace tiercc {

using Bytes = std::vector<std::uint8_t>;

/// Implementations must be safe for concurrent calls from several threads: the failure
/// detector beats from a thread of its own while the communicator sets up.
class Store {
 public:
  virtual ~Store() = default;
  /// Stores value under key, replacing any previous value, and wakes its waiters.
  virtual void set(const std::string& key, const Bytes& value) = 0;
  /// Waits until key exists, then returns its value; Error{Timeout} naming the key at the deadline.
  virtual Bytes get(const std::string& key, Deadline deadline) = 0;
  /// Atomically adds delta to the integer stored at key (missing = 0) and returns the new value.
  virtual std::int64_t add(const std::string& key, std::int64_t delta) = 0;
  /// Waits until every key exists; Error{Timeout} naming the missing keys at the deadline.
  virtual void wait(const std::vector<std::string>& keys, Deadline deadline) = 0;
  /// True when every key exists, without waiting.
  virtual bool check(const std::vector<std::string>& keys) = 0;
  /// Removes key (no error if missing).
  virtual void erase(const std::string& key) = 0;

  // Convenience wrappers for text values.
  void setString(const std::string& key, const std::string& value) {
    set(key, Bytes(value.begin(), value.end()));
  }
  std::string getString(const std::string& key, Deadline deadline) {
    Bytes b = get(key, deadline);
    return std::string(b.begin(), b.end());
  }
};

}  // namespace tiercc
