// The link model's virtual clock (see link_model.hpp).
#include "core/link_model.hpp"

#include <thread>

#include "core/units.hpp"

namespace tiercc {
namespace {

// Sleeping this little costs more than it models (a wake-up takes tens of microseconds); the
// time stays owed in busyUntil_ and the next charge pays it, so nothing is lost over a run.
constexpr auto kMinSleep = std::chrono::microseconds(50);

}  // namespace

std::string LinkSpec::describe() const {
  if (!paced()) return "not paced";
  std::string bw = bytesPerSec > 0 ? units::formatBandwidth(bytesPerSec) : "unlimited bandwidth";
  return bw + ", " + units::formatLatency(latencySec) + " per step";
}

Clock::duration LinkModel::cost(std::size_t bytes) const {
  double seconds = spec_.latencySec;
  if (spec_.bytesPerSec > 0) seconds += static_cast<double>(bytes) / spec_.bytesPerSec;
  return std::chrono::round<Clock::duration>(std::chrono::duration<double>(seconds));
}

void LinkModel::charge(std::size_t bytes, Clock::time_point since) {
  if (!paced()) return;
  Clock::time_point finish;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    finish = std::max(since, busyUntil_) + cost(bytes);
    busyUntil_ = finish;
  }
  if (finish - Clock::now() >= kMinSleep) std::this_thread::sleep_until(finish);
}

}  // namespace tiercc
