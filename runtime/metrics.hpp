// A communicator's metrics in the Prometheus text format (version 0.0.4): what it ran, by kind and
// algorithm; bytes per tier and rail against the slow tier's bound; latency histograms per kind
// and size class; failures; the heartbeat age of the peers it watches; and the sequence number
// it is at. The counters are updated under the communicator's statistics lock when a call ends
// (a few additions, no allocation); text is made only when /metrics is scraped
// (metrics_server.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "plan/names.hpp"
#include "tiercc/error.hpp"

namespace tiercc {

/// The latency histogram's size classes, by the bytes of one rank's input.
inline constexpr int kNumSizeClasses = 5;
int sizeClassOf(std::uint64_t bytes);
const char* sizeClassName(int sizeClass);  ///< "le_1KiB", "le_64KiB", "le_1MiB", "le_16MiB", "gt_16MiB"

/// Upper bounds of the latency buckets, in seconds (and +Inf).
inline constexpr std::array<double, 9> kLatencyBuckets = {1e-5, 3e-5, 1e-4, 3e-4, 1e-3, 1e-2, 0.1, 1, 10};

struct MetricCounts {
  std::array<std::array<std::uint64_t, kNumAlgorithms>, kNumCollectives> calls{};
  struct Histogram {
    std::array<std::uint64_t, kLatencyBuckets.size() + 1> buckets{};  // the last: +Inf
    std::uint64_t count = 0;
    double sum = 0;
  };
  std::array<std::array<Histogram, kNumSizeClasses>, kNumCollectives> latency{};
  std::uint64_t scaleUpBytes = 0, scaleOutBytes = 0, scaleOutBoundBytes = 0;
  std::array<std::uint64_t, 16> failures{};  // by ErrorCode
  std::uint64_t aborts = 0;

  void called(Collective c, Algorithm a, std::uint64_t bytes, double seconds);
  void failed(ErrorCode code);
};

/// One communicator as a scrape shows it: who it is, its counts, and its gauges.
struct MetricSnapshot {
  int rank = 0, size = 0, domain = 0, localRank = 0;
  std::string communicator;  ///< its store namespace: several per process (splits, subgroups)
  MetricCounts counts;
  std::int64_t entered = -1, completed = -1;
  std::vector<std::pair<int, double>> heartbeatAges;  ///< watched peer, seconds since its count moved
};

/// The text of a scrape: every family once, with its # HELP and # TYPE, each communicator's
/// series in it.
std::string renderMetrics(const std::vector<MetricSnapshot>& communicators);

}  // namespace tiercc
