// Topology detection (see rank_info.hpp).
#include "runtime/rank_info.hpp"

#include <unistd.h>

#include <fstream>
#include <map>
#include <sstream>

#include "core/errors.hpp"

namespace tiercc {

std::string RankInfo::encode() const {
  std::ostringstream out;
  out << hostId << '\n'
      << pid << '\n'
      << domainId << '\n'
      << domainSize << '\n'
      << cacheBytes << '\n'
      << settings << '\n';
  return out.str();
}

RankInfo RankInfo::decode(const std::string& text) {
  std::istringstream in(text);
  RankInfo r;
  std::getline(in, r.hostId);
  in >> r.pid >> r.domainId >> r.domainSize >> r.cacheBytes;
  in.ignore(1);  // the end of the cacheBytes line
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

// A domain key per rank, following the rules in rank_info.hpp.
std::vector<int> domainKeys(const std::vector<RankInfo>& ranks) {
  const int n = static_cast<int>(ranks.size());
  std::vector<int> keys(n);
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
      keys[i] = ranks[i].domainId;
    }
    return keys;
  }
  if (withSize > 0) {
    const int k = ranks[0].domainSize;
    for (int i = 0; i < n; ++i)
      if (ranks[i].domainSize != k)
        fail(ErrorCode::InvalidArgument, "TIERCC_DOMAIN_SIZE differs between ranks: rank 0 has ", k,
             ", rank ", i, " has ", ranks[i].domainSize, " (unset = 0)");
    for (int i = 0; i < n; ++i) keys[i] = i / k;
    return keys;
  }
  std::map<std::string, int> hosts;
  for (int i = 0; i < n; ++i) keys[i] = hosts.emplace(ranks[i].hostId, static_cast<int>(hosts.size())).first->second;
  return keys;
}

}  // namespace

Topology detectTopology(const std::vector<RankInfo>& ranks, int myRank) {
  const int n = static_cast<int>(ranks.size());
  if (n < 1 || myRank < 0 || myRank >= n) fail(ErrorCode::InvalidArgument, "rank ", myRank, " is not in [0, ", n, ")");
  return Topology::fromDomainKeys(domainKeys(ranks), myRank);
}

}  // namespace tiercc
