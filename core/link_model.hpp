// A link model that paces one tier of this rank to a configured bandwidth and latency, so that
// one machine reproduces the ratio of a real cluster's tiers (NVL72: 900 GB/s up, 100 GB/s out)
// in miniature. Set by TIERCC_EMU_SCALE{UP,OUT}_{BW,LATENCY}; unset, nothing is paced.
#pragma once

#include <chrono>
#include <cstddef>
#include <mutex>
#include <string>

#include "tiercc/deadline.hpp"

namespace tiercc {

/// What a modelled link does: bytes per second (0: unlimited) and seconds of latency.
struct LinkSpec {
  double bytesPerSec = 0;
  double latencySec = 0;
  bool paced() const { return bytesPerSec > 0 || latencySec > 0; }
  /// "100 GB/s (800 Gbit/s), 2 us per step" or "not paced".
  std::string describe() const;
};

/// One rank's link on one tier, as a virtual clock. A charge is one step of an algorithm: its
/// messages are in flight together, so their latencies overlap and the link carries their
/// bytes one after another. Latency is therefore charged once per charge, not per message:
///   finish = max(since, busyUntil) + latency + bytes / bandwidth;  busyUntil = finish
/// and charge() sleeps (never spins) until `finish`. `since` is when the step's transfers
/// began: the real transfer overlaps the modelled one, so a step takes the longer of the two.
/// Steps on one link never overlap (busyUntil includes the latency), as in the alpha-beta
/// cost model. Thread-safe.
/// Without `since`, the step may have begun up to kBurst ago (a token bucket that deep): the
/// copy that just moved the bytes, and the oversleep of the previous charge, count as link
/// time instead of adding to it; an idle link still earns no more than kBurst of credit.
class LinkModel {
 public:
  LinkModel() = default;
  explicit LinkModel(LinkSpec spec) : spec_(spec) {}

  const LinkSpec& spec() const { return spec_; }
  bool paced() const { return spec_.paced(); }
  /// The modelled time of one step moving `bytes`.
  Clock::duration cost(std::size_t bytes) const;
  static constexpr Clock::duration kBurst = std::chrono::milliseconds(1);

  /// Blocks until the modelled link would have carried `bytes`, begun at `since` (or when the
  /// link came free). Zero bytes still pay the latency (an empty message is a message).
  /// Returns at once when the link is not paced.
  void charge(std::size_t bytes, Clock::time_point since);
  /// The same for bytes just moved, begun at most kBurst ago.
  void charge(std::size_t bytes) {
    if (paced()) charge(bytes, Clock::now() - kBurst);  // no clock read for a link that is not paced
  }

 private:
  LinkSpec spec_;
  std::mutex mutex_;
  Clock::time_point busyUntil_{};
};

}  // namespace tiercc
