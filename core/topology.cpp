// Topology construction and validation (see topology.hpp).
#include "core/topology.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "core/errors.hpp"

namespace tiercc {

std::string RankInfo::encode() const {
  std::ostringstream out;
  out << hostId << '\n' << pid << '\n' << domainId << '\n' << domainSize << '\n' << settings << '\n';
  return out.str();
}

RankInfo RankInfo::decode(const std::string& text) {
  std::istringstream in(text);
  RankInfo r;
  std::getline(in, r.hostId);
  in >> r.pid >> r.domainId >> r.domainSize;
  in.ignore(1);  // the end of the domainSize line
  std::getline(in, r.settings);
  if (in.fail()) fail(ErrorCode::Internal, "malformed rank info record '", text, "'");
  return r;
}

std::string localHostId() {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  std::string bootId;
  std::ifstream("/proc/sys/kernel/random/boot_id") >> bootId;
  return std::string(host) + "/" + bootId;
}

namespace {

// Assigns a domain key per rank following the rules in topology.hpp.
std::vector<std::string> domainKeys(const std::vector<RankInfo>& ranks) {
  const int n = static_cast<int>(ranks.size());
  std::vector<std::string> keys(n);
  int withId = 0, withSize = 0;
  for (const RankInfo& r : ranks) {
    withId += r.domainId >= 0;
    withSize += r.domainSize > 0;
  }
  if (withId > 0) {
    for (int i = 0; i < n; ++i) {
      if (ranks[i].domainId < 0)
        fail(ErrorCode::InvalidArgument, "TIERCC_DOMAIN_ID is set on ", withId, " of ", n,
             " ranks but not on rank ", i, ": set it on every rank or on none");
      keys[i] = "id" + std::to_string(ranks[i].domainId);
    }
    return keys;
  }
  if (withSize > 0) {
    int k = ranks[0].domainSize;
    for (int i = 0; i < n; ++i)
      if (ranks[i].domainSize != k)
        fail(ErrorCode::InvalidArgument, "TIERCC_DOMAIN_SIZE differs between ranks: rank 0 has ", k,
             ", rank ", i, " has ", ranks[i].domainSize, " (unset = 0)");
    for (int i = 0; i < n; ++i) keys[i] = "block" + std::to_string(i / k);
    return keys;
  }
  for (int i = 0; i < n; ++i) keys[i] = "host:" + ranks[i].hostId;
  return keys;
}

}  // namespace

Topology Topology::build(const std::vector<RankInfo>& ranks, int myRank) {
  const int n = static_cast<int>(ranks.size());
  if (n < 1 || myRank < 0 || myRank >= n)
    fail(ErrorCode::InvalidArgument, "rank ", myRank, " is not in [0, ", n, ")");
  std::vector<std::string> keys = domainKeys(ranks);
  Topology t;
  t.rank_ = myRank;
  t.domainOf_.assign(n, -1);
  t.localRankOf_.assign(n, -1);
  std::map<std::string, int> index;  // key -> domain, numbered by lowest rank
  for (int i = 0; i < n; ++i) {
    auto [it, fresh] = index.emplace(keys[i], static_cast<int>(t.members_.size()));
    if (fresh) t.members_.emplace_back();
    t.domainOf_[i] = it->second;
    t.localRankOf_[i] = static_cast<int>(t.members_[it->second].size());
    t.members_[it->second].push_back(i);
  }
  return t;
}

int Topology::minDomainSize() const {
  size_t m = members_[0].size();
  for (const auto& d : members_) m = std::min(m, d.size());
  return static_cast<int>(m);
}

bool Topology::uniform() const { return minDomainSize() == domainSize(0) &&
  std::all_of(members_.begin(), members_.end(), [&](const auto& d) { return d.size() == members_[0].size(); }); }

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

std::string Topology::nameRank(int r) const {
  return concat("rank ", r, " (domain ", domainOf_[r], ", local rank ", localRankOf_[r], ")");
}

}  // namespace tiercc
