// Groups of ranks for the flat algorithms (see flat.hpp).
#include "exec/flat/flat.hpp"

namespace tiercc {

Group Group::world(const Topology& topo) {
  Group g;
  g.ranks.resize(static_cast<std::size_t>(topo.size()));
  for (int r = 0; r < topo.size(); ++r) g.ranks[static_cast<std::size_t>(r)] = r;
  g.me = topo.rank();
  return g;
}

}  // namespace tiercc
