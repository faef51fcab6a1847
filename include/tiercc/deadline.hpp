// Deadline: an absolute point in time every blocking wait in tiercc is bounded by. Public: a
// Store that a program implements (tiercc/store.hpp) takes its waits as Deadlines.
#pragma once

#include <time.h>

#include <algorithm>
#include <chrono>

namespace tiercc {

using Clock = std::chrono::steady_clock;

class Deadline {
 public:
  /// A deadline `timeout` from now; milliseconds::max() means "never" (only for user waits).
  static Deadline after(std::chrono::milliseconds timeout) {
    if (timeout >= std::chrono::hours(24 * 365)) return Deadline(Clock::time_point::max());
    return Deadline(Clock::now() + timeout);
  }
  /// The same from the kernel's coarse clock: no clock read, so cheap enough for every small
  /// collective, and up to one scheduler tick (<= 10 ms) early. For timeouts of seconds.
  static Deadline afterCoarse(std::chrono::milliseconds timeout) {
    if (timeout >= std::chrono::hours(24 * 365)) return Deadline(Clock::time_point::max());
    timespec ts{};
    // CLOCK_MONOTONIC_COARSE counts from the same origin as steady_clock (CLOCK_MONOTONIC).
    if (clock_gettime(CLOCK_MONOTONIC_COARSE, &ts) != 0) return after(timeout);
    const auto now = std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
    return Deadline(Clock::time_point(std::chrono::duration_cast<Clock::duration>(now)) + timeout);
  }
  explicit Deadline(Clock::time_point at) : at_(at) {}

  bool expired() const { return Clock::now() >= at_; }
  Clock::time_point at() const { return at_; }
  /// Time left, never negative.
  std::chrono::milliseconds remaining() const {
    if (at_ == Clock::time_point::max()) return std::chrono::milliseconds::max();
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(at_ - Clock::now());
    return std::max(left, std::chrono::milliseconds(0));
  }
  /// The earlier of this deadline and `slice` from now: for waits that re-check state periodically.
  Deadline capped(std::chrono::milliseconds slice) const {
    auto capped = Clock::now() + slice;
    return Deadline(std::min(capped, at_));
  }

 private:
  Clock::time_point at_;
};

}  // namespace tiercc
