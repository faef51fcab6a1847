// The Prometheus text of a process's communicators (see metrics.hpp). Families are written one
// at a time over every communicator: the format wants a family's samples together.
#include "runtime/metrics.hpp"

#include <cstdio>

#include "core/errors.hpp"

namespace tiercc {
namespace {

constexpr std::uint64_t kKiB = 1024;

std::string escaped(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

// The labels every series of a communicator carries, without the braces.
std::string base(const MetricSnapshot& m) {
  return concat("rank=\"", m.rank, "\",domain=\"", m.domain, "\",comm=\"", escaped(m.communicator), "\"");
}

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.9g", v);
  return text;
}

void family(std::string& out, const char* name, const char* type, const char* help) {
  out += concat("# HELP ", name, " ", help, "\n# TYPE ", name, " ", type, "\n");
}

// "allreduce" and friends as the coll label: the public names.
const char* collLabel(int c) { return toString(static_cast<Collective>(c)); }

const char* codeLabel(int code) {
  switch (static_cast<ErrorCode>(code)) {
    case ErrorCode::InvalidArgument:
      return "invalid_argument";
    case ErrorCode::Timeout:
      return "timeout";
    case ErrorCode::PeerFailure:
      return "peer_failure";
    case ErrorCode::TransportError:
      return "transport_error";
    case ErrorCode::SystemError:
      return "system_error";
    case ErrorCode::Aborted:
      return "aborted";
    case ErrorCode::Internal:
      return "internal";
    case ErrorCode::NotSupported:
      return "not_supported";
    default:
      return nullptr;
  }
}

}  // namespace

int sizeClassOf(std::uint64_t bytes) {
  if (bytes <= kKiB) return 0;
  if (bytes <= 64 * kKiB) return 1;
  if (bytes <= kKiB * kKiB) return 2;
  if (bytes <= 16 * kKiB * kKiB) return 3;
  return 4;
}

const char* sizeClassName(int sizeClass) {
  static const char* const kNames[kNumSizeClasses] = {"le_1KiB", "le_64KiB", "le_1MiB", "le_16MiB", "gt_16MiB"};
  return sizeClass >= 0 && sizeClass < kNumSizeClasses ? kNames[sizeClass] : "unknown";
}

void MetricCounts::called(Collective c, Algorithm a, std::uint64_t bytes, double seconds) {
  const int ci = static_cast<int>(c);
  calls[ci][static_cast<int>(a)] += 1;
  Histogram& h = latency[ci][sizeClassOf(bytes)];
  std::size_t b = 0;
  while (b < kLatencyBuckets.size() && seconds > kLatencyBuckets[b]) ++b;
  h.buckets[b] += 1;  // made cumulative when rendered
  h.count += 1;
  h.sum += seconds;
}

void MetricCounts::failed(ErrorCode code) {
  const auto i = static_cast<std::size_t>(code);
  if (i < failures.size()) failures[i] += 1;
}

std::string renderMetrics(const std::vector<MetricSnapshot>& comms) {
  std::string out;
  out.reserve(4096 * (comms.size() + 1));
  family(out, "tiercc_collectives_total", "counter", "Collectives completed, by kind and the algorithm that ran.");
  for (const MetricSnapshot& m : comms)
    for (int c = 0; c < kNumCollectives; ++c)
      for (int a = 0; a < kNumAlgorithms; ++a)
        if (m.counts.calls[c][a])
          out += concat("tiercc_collectives_total{", base(m), ",coll=\"", collLabel(c), "\",algorithm=\"",
                        toString(static_cast<Algorithm>(a)), "\"} ", m.counts.calls[c][a], "\n");

  family(out, "tiercc_bytes_total", "counter",
         "Bytes this rank moved: inside its domain (scale-up) and across domains on its rail (scale-out).");
  for (const MetricSnapshot& m : comms) {
    out += concat("tiercc_bytes_total{", base(m), ",tier=\"scale-up\",rail=\"", m.localRank, "\"} ",
                  m.counts.scaleUpBytes, "\n");
    out += concat("tiercc_bytes_total{", base(m), ",tier=\"scale-out\",rail=\"", m.localRank, "\"} ",
                  m.counts.scaleOutBytes, "\n");
  }
  family(out, "tiercc_scaleout_bound_bytes_total", "counter",
         "This rank's share of the least scale-out bytes the same collectives need (compare with "
         "tiercc_bytes_total{tier=\"scale-out\"}).");
  for (const MetricSnapshot& m : comms)
    out += concat("tiercc_scaleout_bound_bytes_total{", base(m), ",rail=\"", m.localRank, "\"} ",
                  m.counts.scaleOutBoundBytes, "\n");

  family(out, "tiercc_operation_seconds", "histogram",
         "Time of each completed collective on this rank, by kind and size class of its input.");
  for (const MetricSnapshot& m : comms)
    for (int c = 0; c < kNumCollectives; ++c)
      for (int z = 0; z < kNumSizeClasses; ++z) {
        const MetricCounts::Histogram& h = m.counts.latency[c][z];
        if (!h.count) continue;
        const std::string labels = concat(base(m), ",coll=\"", collLabel(c), "\",size=\"", sizeClassName(z), "\"");
        std::uint64_t cumulative = 0;
        for (std::size_t b = 0; b < h.buckets.size(); ++b) {
          cumulative += h.buckets[b];
          const std::string le = b < kLatencyBuckets.size() ? number(kLatencyBuckets[b]) : "+Inf";
          out += concat("tiercc_operation_seconds_bucket{", labels, ",le=\"", le, "\"} ", cumulative, "\n");
        }
        out += concat("tiercc_operation_seconds_sum{", labels, "} ", number(h.sum), "\n");
        out += concat("tiercc_operation_seconds_count{", labels, "} ", h.count, "\n");
      }

  family(out, "tiercc_failures_total", "counter",
         "Operations that failed on this rank, by error code (timeout, peer_failure, aborted, ...).");
  for (const MetricSnapshot& m : comms)
    for (std::size_t code = 1; code < m.counts.failures.size(); ++code)
      if (const char* label = codeLabel(static_cast<int>(code)))
        out += concat("tiercc_failures_total{", base(m), ",code=\"", label, "\"} ", m.counts.failures[code], "\n");
  family(out, "tiercc_aborts_total", "counter", "Times this rank's communicator was aborted.");
  for (const MetricSnapshot& m : comms) out += concat("tiercc_aborts_total{", base(m), "} ", m.counts.aborts, "\n");

  family(out, "tiercc_heartbeat_age_seconds", "gauge",
         "Seconds since each peer this rank watches last beat (the failure detector declares it failed past "
         "TIERCC_HEARTBEAT_TIMEOUT).");
  for (const MetricSnapshot& m : comms)
    for (const auto& [peer, age] : m.heartbeatAges)
      out += concat("tiercc_heartbeat_age_seconds{", base(m), ",peer=\"", peer, "\"} ", number(age), "\n");

  family(out, "tiercc_sequence", "gauge",
         "Sequence number of the last collective this rank entered and completed (-1: none yet).");
  for (const MetricSnapshot& m : comms) {
    out += concat("tiercc_sequence{", base(m), ",state=\"entered\"} ", m.entered, "\n");
    out += concat("tiercc_sequence{", base(m), ",state=\"completed\"} ", m.completed, "\n");
  }
  family(out, "tiercc_ranks", "gauge", "Ranks in the communicator.");
  for (const MetricSnapshot& m : comms) out += concat("tiercc_ranks{", base(m), "} ", m.size, "\n");
  return out;
}

}  // namespace tiercc
