// A cheap clock for timing a call's steps: the CPU's time-stamp counter where there is one (x86:
// about 10 ns a read, against 25 for steady_clock), else steady_clock's nanoseconds. Ticks
// become seconds with a rate measured against steady_clock since the process started, which is
// exact enough once a few milliseconds have passed (statistics are read long after that).
#pragma once

#include <chrono>
#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace tiercc::cycles {

inline std::uint64_t now() {
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();
#else
  return static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
}

/// Seconds per tick, measured against steady_clock from the first call of this program.
double secondsPerTick();

}  // namespace tiercc::cycles
