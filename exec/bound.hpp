// The slow-tier lower bound of each collective, as this rank's share: every implementation of
// a collective (hierarchical or flat) adds it to TierStats::scaleOutBoundBytes once per call,
// so that stats() reports the bytes sent across domains against what the shape requires. The
// shares sum over the ranks to the bound of plan/plan.hpp (slowTierBound) when the
// sizes divide evenly; each is rounded down.
#pragma once

#include <cstddef>
#include <cstdint>

#include "plan/topology.hpp"

namespace tiercc::bound {

/// 2(D-1)/D x S per domain, shared by the domain's ranks.
inline std::uint64_t allreduce(const Topology& t, std::size_t bytes) {
  const int D = t.numDomains();
  const double domainBound = 2.0 * (D - 1) / D * static_cast<double>(bytes);
  return static_cast<std::uint64_t>(domainBound / t.domainSize());
}

/// Every remote block into every rank's domain: (D-1) blocks per rank (uniform domains).
inline std::uint64_t allgather(const Topology& t, std::size_t blockBytes) {
  return static_cast<std::uint64_t>(t.numDomains() - 1) * blockBytes;
}

/// The partials of the blocks owned elsewhere leave the domain once: (n - k) blocks per domain.
inline std::uint64_t reduceScatter(const Topology& t, std::size_t blockBytes) {
  const std::uint64_t n = t.size(), k = t.domainSize();
  return (n - k) * blockBytes / k;
}

/// S into each non-root domain, sent by the root's domain.
inline std::uint64_t broadcast(const Topology& t, std::size_t bytes, int root) {
  if (t.domain() != t.domainOf(root)) return 0;
  return static_cast<std::uint64_t>(t.numDomains() - 1) * bytes / t.domainSize();
}

/// S out of each non-root domain.
inline std::uint64_t reduce(const Topology& t, std::size_t bytes, int root) {
  if (t.domain() == t.domainOf(root)) return 0;
  return bytes / t.domainSize();
}

/// Every block for a rank of another domain crosses once.
inline std::uint64_t alltoall(const Topology& t, std::size_t blockBytes) {
  return static_cast<std::uint64_t>(t.size() - t.domainSize()) * blockBytes;
}

}  // namespace tiercc::bound
