// ExecGate (runtime/exec_gate.hpp): one operation at a time, whether the lone thread enters with
// plain stores or a second thread has turned the gate shared, and waitIdle() sees both kinds of
// entry. A section updates a pair of plain counters with work between the two writes, so that a
// thread let in mid-section sees them differ. In the ThreadSanitizer job too (scripts/sanitize.sh).
#include "runtime/exec_gate.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <thread>

#include "core/membarrier.hpp"

namespace tiercc {
namespace {

using namespace std::chrono_literals;

struct Pair {
  std::uint64_t first = 0, second = 0;  // plain: only the gate orders them
  std::atomic<int> torn{0};
  void update() {
    if (first != second) torn.fetch_add(1);
    ++first;
    for (int spin = 0; spin < 100; ++spin) std::atomic_signal_fence(std::memory_order_seq_cst);  // not folded
    ++second;
  }
};

bool biased() { return membarrier::registerProcess(); }

// The lone thread is inside its operations (the plain-store way) when a second thread first
// enters: that entry is the one that turns the gate shared, racing the lone thread's. Many fresh
// gates, the second thread entering at a different point of the first's loop each time.
TEST(ExecGate, AThreadThatJoinsNeverEntersBesideTheLoneOne) {
  constexpr int kGates = 200, kLoneEntries = 300, kJoinerEntries = 20;
  for (int g = 0; g < kGates; ++g) {
    ExecGate gate;
    Pair pair;
    std::atomic<bool> started{false};
    std::thread lone([&] {
      for (int i = 0; i < kLoneEntries; ++i) {
        ExecGate::Hold hold(gate);
        pair.update();
        started.store(true, std::memory_order_release);
      }
    });
    while (!started.load(std::memory_order_acquire)) std::this_thread::yield();
    for (int spin = 0; spin < g * 50; ++spin) std::atomic_signal_fence(std::memory_order_seq_cst);
    for (int i = 0; i < kJoinerEntries; ++i) {
      ExecGate::Hold hold(gate);
      pair.update();
    }
    lone.join();
    ASSERT_EQ(pair.torn.load(), 0) << "gate " << g << ": two threads were inside at once";
    ASSERT_EQ(pair.first, std::uint64_t(kLoneEntries + kJoinerEntries)) << "gate " << g << ": updates were lost";
    ASSERT_EQ(pair.second, pair.first);
    EXPECT_TRUE(gate.shared()) << "a second thread entered: the gate is shared for good";
  }
}

// One thread alone keeps the plain-store way (nothing else turns the gate shared, waitIdle
// included), and waitIdle sees it inside: false while it is, true once it left.
TEST(ExecGate, WaitIdleSeesTheLoneThreadInside) {
  if (!biased()) GTEST_SKIP() << "membarrier's global expedited barrier is not offered here: the gate is always shared";
  ExecGate gate;
  std::atomic<bool> inside{false}, release{false};
  std::thread lone([&] {
    for (int i = 0; i < 1000; ++i) ExecGate::Hold hold(gate);
    ExecGate::Hold hold(gate);
    inside.store(true);
    while (!release.load()) std::this_thread::sleep_for(1ms);
  });
  while (!inside.load()) std::this_thread::sleep_for(1ms);
  EXPECT_FALSE(gate.shared()) << "one thread alone entered";
  EXPECT_FALSE(gate.waitIdle(50ms)) << "the lone thread is inside its operation";
  EXPECT_FALSE(gate.shared()) << "waitIdle enters nothing: it leaves the gate the lone thread's";
  release.store(true);
  EXPECT_TRUE(gate.waitIdle(5000ms)) << "the lone thread left";
  lone.join();
}

// A second thread that enters while the lone one is inside waits until it leaves.
TEST(ExecGate, ASecondThreadWaitsForTheLoneOnesOperation) {
  ExecGate gate;
  std::atomic<bool> inside{false}, release{false}, secondIn{false};
  std::thread lone([&] {
    ExecGate::Hold hold(gate);
    inside.store(true);
    while (!release.load()) std::this_thread::sleep_for(1ms);
  });
  while (!inside.load()) std::this_thread::sleep_for(1ms);
  std::thread second([&] {
    ExecGate::Hold hold(gate);
    secondIn.store(true);
  });
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(secondIn.load()) << "the second thread entered while the first was inside";
  release.store(true);
  lone.join();
  second.join();
  EXPECT_TRUE(secondIn.load());
  EXPECT_TRUE(gate.shared());
  EXPECT_TRUE(gate.waitIdle(1000ms));
}

}  // namespace
}  // namespace tiercc
