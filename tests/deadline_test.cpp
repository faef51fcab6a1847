// Deadlines: the precise and the coarse clock agree, to within a scheduler tick.
#include <gtest/gtest.h>

#include "tiercc/deadline.hpp"

namespace tiercc {
namespace {

using namespace std::chrono_literals;

TEST(Deadline, CoarseIsAtMostATickEarlyAndNeverLate) {
  for (int i = 0; i < 100; ++i) {
    const auto before = Clock::now();
    const Deadline coarse = Deadline::afterCoarse(10s);
    const auto after = Clock::now();
    EXPECT_LE(coarse.at(), after + 10s);
    EXPECT_GE(coarse.at(), before + 10s - 20ms);  // a tick is 1-10 ms
    EXPECT_FALSE(coarse.expired());
  }
}

TEST(Deadline, NeverStaysNever) {
  EXPECT_EQ(Deadline::afterCoarse(std::chrono::milliseconds::max()).at(), Clock::time_point::max());
  EXPECT_EQ(Deadline::afterCoarse(std::chrono::milliseconds::max()).remaining(), std::chrono::milliseconds::max());
}

TEST(Deadline, ExpiresAndCountsDown) {
  const Deadline soon = Deadline::afterCoarse(0ms);
  EXPECT_LE(soon.remaining(), 0ms);
  const Deadline later = Deadline::after(5s);
  EXPECT_GT(later.remaining(), 4s);
  const auto before = Clock::now();
  const auto capped = later.capped(1s).at();
  EXPECT_GE(capped, before + 1s);
  EXPECT_LE(capped, Clock::now() + 1s);
}

}  // namespace
}  // namespace tiercc
