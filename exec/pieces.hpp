// Where a hierarchical collective's final pieces go (internal to exec/): the rule the domain and
// rail steps share. A final piece goes straight into its owner's receive buffer when this rank
// is its owner, else into this rank's window, for the owner to copy.
#pragma once

#include "exec/call.hpp"

namespace tiercc::pieces {

/// A reduce-scatter block this rail member reduced last: the owner's receive buffer, or the
/// result slot N + l / rails of this rank's window for local rank l.
inline std::byte* finalBlock(Call& c, const Fragment& f, int block) {
  const Topology& t = c.ctx.topo;
  if (block == t.rank()) return c.recv() + f.offset * c.es;
  return c.window(c.me, f) + (t.size() + t.localRankOf(block) / c.rails) * f.count * c.es;
}

/// A vector's slice from element `begin` of f, where `out` says: the scratch, the root's
/// receive buffer (mapped, on the zero-copy path), or this rank's receive buffer when it needs
/// the result (allreduce, or the root of a reduce), else its window for the root to copy.
inline std::byte* slice(Call& c, Buffer out, const Fragment& f, std::size_t begin) {
  if (out == Buffer::Accumulate) return c.accumulate(f);
  if (out == Buffer::PeerRecv)
    return (c.isRoot() ? c.recv() : c.state.direct.peerRecv(c.rootLocal)) + c.userOffset(0, f, begin);
  if (c.plan.root < 0 || c.isRoot()) return c.recv() + c.userOffset(0, f, begin);
  return c.window(c.me, f) + begin * c.es;
}

}  // namespace tiercc::pieces
