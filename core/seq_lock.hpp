// SeqLock: lets one thread update a group of fields that other threads read without a lock (a
// sequence lock). A reader retries while a write is in progress, so it never sees half of one.
// For state the hot path updates at every call and a monitor reads now and then (the flight
// recorder): a write costs two plain stores around the fields' own, where a mutex would cost two
// atomic read-modify-writes. The fields must be atomics, written and read relaxed.
#pragma once

#include <atomic>
#include <cstdint>

#include "core/cpu_relax.hpp"

namespace tiercc {

class SeqLock {
 public:
  /// Writes are made by one thread at a time (the caller makes sure of it).
  void beginWrite() {
    version_.store(version_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);  // odd: writing
    std::atomic_thread_fence(std::memory_order_release);
  }
  void endWrite() { version_.store(version_.load(std::memory_order_relaxed) + 1, std::memory_order_release); }

  /// Calls `read` until it ran without a write in between; returns what it returned.
  template <class Read>
  auto read(Read&& read) const {
    while (true) {
      const std::uint64_t before = version_.load(std::memory_order_acquire);
      if (before & 1) {
        cpuRelax();
        continue;
      }
      auto value = read();
      std::atomic_thread_fence(std::memory_order_acquire);
      if (version_.load(std::memory_order_relaxed) == before) return value;
    }
  }

 private:
  std::atomic<std::uint64_t> version_{0};
};

}  // namespace tiercc
