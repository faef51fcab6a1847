// Topology: which ranks form each scale-up domain, and each rank's local rank (its rail).
// Built from what every rank published at init; the rules are in topology.cpp.
#pragma once

#include <string>
#include <vector>

namespace tiercc {

/// What one rank publishes about itself at init.
struct RankInfo {
  std::string hostId;   ///< same value = same host (hostname + boot id)
  int pid = 0;
  int domainId = -1;    ///< TIERCC_DOMAIN_ID, or -1 when unset
  int domainSize = 0;   ///< TIERCC_DOMAIN_SIZE, or 0 when unset
  std::string settings; ///< the settings every rank must share, e.g. "transport=tcp shm_chunk=4194304"

  std::string encode() const;
  static RankInfo decode(const std::string& text);
};

class Topology {
 public:
  /// Groups ranks into domains: explicit domain ids if any rank has one (then all must),
  /// else TIERCC_DOMAIN_SIZE (consecutive ranks; must agree), else same host = same domain.
  /// Domains are numbered by their lowest rank. InvalidArgument explains any inconsistency.
  static Topology build(const std::vector<RankInfo>& ranks, int myRank);

  int rank() const { return rank_; }
  int size() const { return static_cast<int>(domainOf_.size()); }
  int domain() const { return domainOf_[rank_]; }
  int localRank() const { return localRankOf_[rank_]; }
  int numDomains() const { return static_cast<int>(members_.size()); }
  int domainOf(int rank) const { return domainOf_[rank]; }
  int localRankOf(int rank) const { return localRankOf_[rank]; }
  int domainSize(int domain) const { return static_cast<int>(members_[domain].size()); }
  int domainSize() const { return domainSize(domain()); }
  /// Global ranks of a domain, in rank order (index = local rank).
  const std::vector<int>& members(int domain) const { return members_[domain]; }
  /// Smallest domain size: the number of rails every domain has.
  int minDomainSize() const;
  /// The rank with local rank `localRank` in `domain`.
  int rankAt(int domain, int localRank) const { return members_[domain][localRank]; }
  /// True when every domain has the same size.
  bool uniform() const;
  /// "2 domains x 4 ranks" or "3 domains (sizes 3,1,2)".
  std::string describe() const;
  /// "rank 5 (domain 1, local rank 1)"
  std::string nameRank(int rank) const;

 private:
  int rank_ = 0;
  std::vector<int> domainOf_;
  std::vector<int> localRankOf_;
  std::vector<std::vector<int>> members_;
};

/// This host's identity for domain detection: hostname plus kernel boot id.
std::string localHostId();

}  // namespace tiercc
