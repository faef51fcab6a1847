#include "runtime/watched_peers.hpp"

#include <algorithm>

namespace tiercc {

std::vector<int> watchedPeers(const Topology& topo) {
  std::vector<int> out;
  const int d = topo.domain(), l = topo.localRank(), k = topo.domainSize(), domains = topo.numDomains();
  if (k > 1) {
    out.push_back(topo.rankAt(d, (l + 1) % k));
    out.push_back(topo.rankAt(d, (l + k - 1) % k));
  }
  if (domains > 1) {
    for (int other : {(d + 1) % domains, (d + domains - 1) % domains})
      out.push_back(topo.rankAt(other, l % topo.domainSize(other)));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  out.erase(std::remove(out.begin(), out.end(), topo.rank()), out.end());
  return out;
}

}  // namespace tiercc
