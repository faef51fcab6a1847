// Topology as data (see topology.hpp).
#include "plan/topology.hpp"

#include <algorithm>
#include <map>
#include <sstream>

#include "core/errors.hpp"

namespace tiercc {

Topology Topology::fromDomainKeys(const std::vector<int>& keyOfRank, int myRank) {
  const int n = static_cast<int>(keyOfRank.size());
  if (n < 1 || myRank < 0 || myRank >= n) fail(ErrorCode::InvalidArgument, "rank ", myRank, " is not in [0, ", n, ")");
  Topology t;
  t.rank_ = myRank;
  t.domainOf_.assign(n, -1);
  t.localRankOf_.assign(n, -1);
  std::map<int, int> index;  // key -> domain, numbered by lowest rank
  for (int i = 0; i < n; ++i) {
    auto [it, fresh] = index.emplace(keyOfRank[i], static_cast<int>(t.members_.size()));
    if (fresh) t.members_.emplace_back();
    t.domainOf_[i] = it->second;
    t.localRankOf_[i] = static_cast<int>(t.members_[it->second].size());
    t.members_[it->second].push_back(i);
  }
  t.minDomainSize_ = static_cast<int>(t.members_[0].size());
  for (const auto& d : t.members_) t.minDomainSize_ = std::min(t.minDomainSize_, static_cast<int>(d.size()));
  return t;
}

bool Topology::uniform() const {
  return std::all_of(members_.begin(), members_.end(), [&](const auto& d) { return d.size() == members_[0].size(); });
}

std::string Topology::describe() const {
  std::ostringstream out;
  if (uniform()) {
    out << numDomains() << (numDomains() == 1 ? " domain" : " domains") << " x " << domainSize(0)
        << (domainSize(0) == 1 ? " rank" : " ranks");
  } else {
    out << numDomains() << " domains (sizes ";
    for (int d = 0; d < numDomains(); ++d) out << (d ? "," : "") << domainSize(d);
    out << ")";
  }
  return out.str();
}

std::vector<int> Topology::railPeers() const {
  std::vector<int> out;
  for (int d = 0; d < numDomains(); ++d)
    if (d != domain() && localRank() < domainSize(d)) out.push_back(rankAt(d, localRank()));
  std::sort(out.begin(), out.end());
  return out;
}

std::string Topology::nameRank(int r) const {
  return concat("rank ", r, " (domain ", domainOf_[r], ", local rank ", localRankOf_[r], ")");
}

}  // namespace tiercc
