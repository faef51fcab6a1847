// Whom a rank's failure detector watches: its neighbours on both tiers, the ranks it waits on
// first in most plans. Next and previous local rank in its domain, and the same local rank (modulo
// their size) in the next and previous domain: at most four, whatever the job's size, and every
// rank is watched by someone (its domain neighbours, or, alone in its domain, its rail neighbours).
#pragma once

#include <vector>

#include "plan/topology.hpp"

namespace tiercc {

/// The ranks topo.rank() watches, without itself or repeats, in increasing order.
std::vector<int> watchedPeers(const Topology& topo);

}  // namespace tiercc
