// Topology: which ranks form each scale-up domain, and each rank's local rank (its rail), as
// pure data. Detecting it (hosts, TIERCC_DOMAIN_*) is the runtime's job (runtime/rank_info.hpp).
#pragma once

#include <string>
#include <vector>

namespace tiercc {

class Topology {
 public:
  Topology() = default;
  /// Ranks with the same key form a domain; domains are numbered by their lowest rank, local
  /// ranks by rank order inside the domain.
  static Topology fromDomainKeys(const std::vector<int>& keyOfRank, int myRank);

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
  int minDomainSize() const { return minDomainSize_; }
  /// The rank with local rank `localRank` in `domain`.
  int rankAt(int domain, int localRank) const { return members_[domain][localRank]; }
  /// This rank's rail peers: its local rank in every other domain that has one, in rank order.
  /// Symmetric (a rank is its rail peers' rail peer): the scale-out pairs every plan uses.
  std::vector<int> railPeers() const;
  /// True when every domain has the same size.
  bool uniform() const;
  /// "2 domains x 4 ranks" or "3 domains (sizes 3,1,2)".
  std::string describe() const;
  /// "rank 5 (domain 1, local rank 1)"
  std::string nameRank(int rank) const;

 private:
  int rank_ = 0;
  int minDomainSize_ = 0;
  std::vector<int> domainOf_;
  std::vector<int> localRankOf_;
  std::vector<std::vector<int>> members_;
};

}  // namespace tiercc
