// Topology detection: what each rank publishes about itself at init, and the rules that group
// ranks into domains from it (explicit ids, a domain size, or the host).
#pragma once

#include <string>
#include <vector>

#include "plan/topology.hpp"

namespace tiercc {

/// What one rank publishes about itself at init.
struct RankInfo {
  std::string hostId;    ///< same value = same host (hostname + boot id)
  int pid = 0;
  int domainId = -1;     ///< TIERCC_DOMAIN_ID, or -1 when unset
  int domainSize = 0;    ///< TIERCC_DOMAIN_SIZE, or 0 when unset
  std::size_t cacheBytes = 0;  ///< coreCacheBytes() of this rank (0: none, or its scale-up is paced)
  std::string settings;  ///< the settings every rank must share, e.g. "transport=tcp shm_chunk=4194304"

  std::string encode() const;
  static RankInfo decode(const std::string& text);
};

/// Groups ranks into domains: explicit domain ids if any rank has one (then all must), else
/// TIERCC_DOMAIN_SIZE (consecutive ranks; must agree), else same host = same domain. Domains are
/// numbered by their lowest rank. InvalidArgument explains any inconsistency.
Topology detectTopology(const std::vector<RankInfo>& ranks, int myRank);

/// This host's identity for domain detection: hostname plus kernel boot id.
std::string localHostId();

}  // namespace tiercc
