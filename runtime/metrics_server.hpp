// The process's /metrics endpoint: one small HTTP server (Boost.Asio, a thread of its own) that
// answers GET /metrics with the Prometheus text of every live communicator of the process. It
// starts with the first communicator when TIERCC_METRICS_PORT is set, on TIERCC_METRICS_ADDR and
// that port plus the rank's index on its host (so ranks sharing a host do not collide), and
// lives as long as the process. A port that cannot be bound is logged and the job goes on.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "runtime/metrics.hpp"

namespace tiercc {

/// Adds a communicator's series to the endpoint (starting it, on the first call, at addr:port);
/// returns a handle for unregisterMetrics.
int registerMetrics(const std::string& addr, std::uint16_t port, std::function<MetricSnapshot()> snapshot);
/// After it returns, `snapshot` is not running and will not be called.
void unregisterMetrics(int handle);
/// The port the endpoint listens on, 0 if none.
std::uint16_t metricsPort();

}  // namespace tiercc
