// Deadline: an absolute point in time every blocking wait in tiercc is bounded by.
#pragma once

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
