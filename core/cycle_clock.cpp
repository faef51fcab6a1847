// The tick rate of the cycle clock (see cycle_clock.hpp).
#include "core/cycle_clock.hpp"

namespace tiercc::cycles {
namespace {

struct Origin {
  std::uint64_t ticks = now();
  std::chrono::steady_clock::time_point at = std::chrono::steady_clock::now();
};
const Origin kOrigin;  // at static initialisation: the longest span there is to measure over

}  // namespace

double secondsPerTick() {
#if defined(__x86_64__) || defined(__i386__)
  const std::uint64_t ticks = now() - kOrigin.ticks;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - kOrigin.at).count();
  return ticks > 0 ? seconds / double(ticks) : 0;
#else
  return 1e-9;
#endif
}

}  // namespace tiercc::cycles
