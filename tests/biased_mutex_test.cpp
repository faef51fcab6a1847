// BiasedMutex (core/biased_mutex.hpp): the frequent side and the other sides exclude each
// other. One thread updates a pair of plain counters on the biased side, with work between the
// two writes so that a reader let in mid-section sees them differ; two others read the pair and
// update it through lock(). A reader that ever sees the counters differ, or a final count short
// of every update, is a broken exclusion (removing lock()'s wait for the frequent side fails it
// at once). In the ThreadSanitizer job too (scripts/sanitize.sh).
#include "core/biased_mutex.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace tiercc {
namespace {

TEST(BiasedMutex, BothSidesExcludeEachOther) {
  BiasedMutex mutex;
  std::uint64_t first = 0, second = 0;  // plain: only the mutex orders them
  constexpr int kBiasedUpdates = 200000, kOtherUpdates = 2000, kOthers = 2;
  std::atomic<bool> biasedDone{false};
  std::atomic<int> torn{0};

  std::thread frequent([&] {
    for (int i = 0; i < kBiasedUpdates; ++i) {
      BiasedMutex::BiasedGuard guard(mutex);
      ++first;
      for (int spin = 0; spin < 200; ++spin) std::atomic_signal_fence(std::memory_order_seq_cst);  // not folded
      ++second;
    }
    biasedDone.store(true);
  });
  std::vector<std::thread> others;
  for (int t = 0; t < kOthers; ++t) {
    others.emplace_back([&] {
      for (int i = 0; i < kOtherUpdates || !biasedDone.load(); ++i) {
        std::lock_guard<BiasedMutex> lock(mutex);
        if (first != second) torn.fetch_add(1);
        if (i < kOtherUpdates) ++first, ++second;
      }
    });
  }
  frequent.join();
  for (auto& t : others) t.join();
  EXPECT_EQ(torn.load(), 0) << "a lock() holder saw the frequent side's section half done";
  const std::uint64_t expected = kBiasedUpdates + static_cast<std::uint64_t>(kOthers) * kOtherUpdates;
  EXPECT_EQ(first, expected) << "updates were lost";
  EXPECT_EQ(second, expected) << "updates were lost";
}

// The frequent side after another side held the mutex sees what it wrote, and the other side
// sees what the frequent side wrote: a handoff in both directions, many times.
TEST(BiasedMutex, HandsOffInBothDirections) {
  BiasedMutex mutex;
  std::uint64_t value = 0;
  std::atomic<int> turn{0};  // 0: the frequent side's, 1: the other's
  constexpr int kRounds = 20000;
  std::thread other([&] {
    for (int i = 0; i < kRounds; ++i) {
      while (turn.load(std::memory_order_relaxed) != 1) std::this_thread::yield();
      std::lock_guard<BiasedMutex> lock(mutex);
      EXPECT_EQ(value, static_cast<std::uint64_t>(2 * i + 1));
      ++value;
      turn.store(0, std::memory_order_relaxed);  // relaxed: only the mutex may order `value`
    }
  });
  for (int i = 0; i < kRounds; ++i) {
    while (turn.load(std::memory_order_relaxed) != 0) std::this_thread::yield();
    BiasedMutex::BiasedGuard guard(mutex);
    EXPECT_EQ(value, static_cast<std::uint64_t>(2 * i));
    ++value;
    turn.store(1, std::memory_order_relaxed);
  }
  other.join();
  EXPECT_EQ(value, 2u * kRounds);
}

}  // namespace
}  // namespace tiercc
