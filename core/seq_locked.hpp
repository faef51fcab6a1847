// SeqLocked<T>: a value one thread writes and other threads read without a lock (a sequence
// lock). A reader retries while a write is in progress, so it never sees half of one. For state
// the hot path updates at every call and a monitor reads now and then (the flight recorder):
// a write is a few plain stores, where a mutex would cost two atomic read-modify-writes.
// T must be trivially copyable; it travels word by word through relaxed atomics.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/cpu_relax.hpp"

namespace tiercc {

template <class T>
class SeqLocked {
  static_assert(std::is_trivially_copyable_v<T>, "SeqLocked copies T as bytes");
  static constexpr std::size_t kWords = (sizeof(T) + 7) / 8;

 public:
  SeqLocked() { store(T{}); }

  /// One writer at a time (the caller makes sure of it).
  void store(const T& value) {
    const std::uint64_t v = version_.load(std::memory_order_relaxed);
    version_.store(v + 1, std::memory_order_relaxed);  // odd: writing
    std::atomic_thread_fence(std::memory_order_release);
    std::uint64_t words[kWords] = {};
    std::memcpy(words, &value, sizeof(T));
    for (std::size_t i = 0; i < kWords; ++i) words_[i].store(words[i], std::memory_order_relaxed);
    version_.store(v + 2, std::memory_order_release);
  }

  T load() const {
    std::uint64_t words[kWords];
    while (true) {
      const std::uint64_t before = version_.load(std::memory_order_acquire);
      if (before & 1) {
        cpuRelax();
        continue;
      }
      for (std::size_t i = 0; i < kWords; ++i) words[i] = words_[i].load(std::memory_order_relaxed);
      std::atomic_thread_fence(std::memory_order_acquire);
      if (version_.load(std::memory_order_relaxed) == before) break;
    }
    T value;
    std::memcpy(&value, words, sizeof(T));
    return value;
  }

 private:
  std::atomic<std::uint64_t> version_{0};
  std::array<std::atomic<std::uint64_t>, kWords> words_{};
};

}  // namespace tiercc
