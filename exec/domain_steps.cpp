// The steps inside a domain (see steps.hpp): staging, the reductions and copies among the
// domain's ranks, and publishing. A rank writes only its own window and buffers (a zero-copy
// reduce also writes the root's receive buffer, which is mapped); it reads its peers' windows
// once they raised the flag that says the data is there, or their buffers on a direct path.
// Reductions start with this rank's own data (the destination may alias it) and go on in
// local-rank order from the next rank; each piece is reduced by one rank only, so every rank of
// every domain ends with the same bits.
#include <vector>

#include "core/copy.hpp"
#include "core/errors.hpp"
#include "core/reduce.hpp"
#include "exec/steps.hpp"
#include "plan/pattern/pattern.hpp"

namespace tiercc::steps {
namespace {

using pattern::partition;

// dst[0, n) = op over the domain's ranks of their data at `windowAt` of their window (staged)
// or `userAt` of their send buffer (direct; this rank's own always, which stage() may not have
// staged): local rank `first`'s first (dst may alias it), then
// the others in local-rank order from this rank's. Through cross-memory attach each peer's part
// comes through the kernel into the scratch, chunk by chunk (`first` is then this rank: only one
// operand is ever in the scratch).
void reduceOverDomain(Call& c, const Fragment& f, Buffer in, std::size_t windowAt, std::size_t userAt, std::byte* dst,
                      std::size_t n, int first) {
  const std::size_t es = c.es;
  const bool staged = in == Buffer::Window, cma = !staged && c.state.direct.path() == Path::CrossMemory;
  std::vector<int>& order = c.state.order;  // first, then me, me + 1, ... without first
  order.assign(1, first);
  for (int i = 0; i < c.k; ++i)
    if ((c.me + i) % c.k != first) order.push_back((c.me + i) % c.k);
  if (cma && first != c.me) fail(ErrorCode::Internal, c.ctx.what, ": a cross-memory reduction must start at home");
  std::byte* bounce = c.ctx.scratch.accumulate.data();
  const std::size_t chunk =
      cma ? std::max<std::size_t>(1, std::min(kCrossMemoryChunkBytes, c.ctx.scratch.accumulate.size()) / es) : n;
  auto src = [&](int p, std::size_t off, std::size_t len) -> const std::byte* {
    if (p == c.me) return c.send() + userAt + off;
    if (staged) return c.window(p, f) + windowAt + off;
    if (!cma) return c.state.direct.peerSend(p) + userAt + off;
    c.state.direct.read(p, true, userAt + off, bounce, len);  // counts what it reads
    return bounce;
  };
  for (std::size_t at = 0; at < n; at += chunk) {
    const std::size_t len = std::min(chunk, n - at), off = at * es;
    std::byte* out = dst + off;
    const std::byte* head = src(first, off, len * es);
    if (c.k == 1) {
      if (out != head) copyBytes(out, head, len * es);
      continue;
    }
    if (head == out)
      reduceInto(out, src(order[1], off, len * es), len, c.args.dt, c.args.op);
    else
      reduce3(out, head, src(order[1], off, len * es), len, c.args.dt, c.args.op);
    for (int i = 2; i < c.k; ++i) reduceInto(out, src(order[i], off, len * es), len, c.args.dt, c.args.op);
  }
  if (!cma) c.ctx.movedUp((c.k - 1) * n * es);
}

// Copies `len` bytes of local rank `peer`'s data into dst: from its window at `windowAt`
// (staged) or its send or receive buffer at `userAt` (direct). Counts reads of peers.
void copyFromPeer(Call& c, const Fragment& f, Buffer in, int peer, std::size_t windowAt, std::size_t userAt,
                  std::byte* dst, std::size_t len) {
  if (len == 0) return;
  if (in == Buffer::Window) {
    copyBytes(dst, c.window(peer, f) + windowAt, len);
    if (peer != c.me) c.ctx.movedUp(len);
  } else if (peer != c.me) {
    c.state.direct.read(peer, in == Buffer::PeerSend, userAt, dst, len);
  } else {
    const std::byte* own = (in == Buffer::PeerSend ? c.send() : c.recv()) + userAt;
    if (own != dst) copyBytes(dst, own, len);
  }
}

void waitAll(Call& c, DomainFlag flag, std::uint32_t epoch) {
  for (int p = 0; p < c.k; ++p) waitPeer(c.ctx, p, flag, epoch);
}

// Every rail's slice of f into the receive buffer, from its rail member's window (staged) or
// receive buffer (direct) once that raised Reduced; but the slice of local rank `skip`, in place.
void copySlices(Call& c, Fragment& f, Buffer in, int skip) {
  for (int j = 0; j < c.rails; ++j) {
    if (j == skip) continue;
    auto [b, e] = partition(f.count, c.rails, j);
    const std::size_t at = c.userOffset(0, f, b);
    waitPeer(c.ctx, j, kFlagReduced, f.epoch);
    copyFromPeer(c, f, in, j, b * c.es, at, c.recv() + at, (e - b) * c.es);
  }
}

// Broadcast: in the root's domain the whole fragment from the root; elsewhere each slice from
// the rail member that received it.
void gatherBroadcast(Call& c, const Step& st, Fragment& f) {
  const std::size_t bytes = f.count * c.es, at = c.userOffset(0, f);
  if (c.isRoot()) {
    if (c.send() != c.recv()) copyBytes(c.recv() + at, c.send() + at, bytes);
  } else if (c.ctx.topo.domain() == c.ctx.topo.domainOf(c.args.root)) {
    if (st.in == Buffer::Window) waitPeer(c.ctx, c.rootLocal, kFlagStaged, f.epoch);
    copyFromPeer(c, f, st.in, c.rootLocal, 0, at, c.recv() + at, bytes);
  } else {
    copySlices(c, f, Buffer::Window, -1);
  }
}

// Reduce-scatter: an owner beyond the rails copies its block from its holder.
void gatherOwnBlock(Call& c, Fragment& f) {
  if (c.me < c.rails) return;
  const int holder = c.me % c.rails;
  const std::size_t bytes = f.count * c.es, slot = c.ctx.topo.size() + c.me / c.rails;
  waitPeer(c.ctx, holder, kFlagReduced, f.epoch);
  copyFromPeer(c, f, Buffer::Window, holder, slot * bytes, 0, c.recv() + f.offset * c.es, bytes);
}

// Allgather: every block, from its source's window or send buffer inside the domain, from the
// arrival slot of the rail member that received it otherwise. Rail member h receives, in domain
// order, the blocks of local ranks h, h + rails, ... of every other domain into slots 1, 2, ...
// of its window: before[h] is its first slot for the domain at hand.
void gatherBlocks(Call& c, const Step& st, Fragment& f) {
  const Topology& t = c.ctx.topo;
  const std::size_t bytes = f.count * c.es, own = f.offset * c.es;
  std::vector<int>& before = c.state.order;
  before.assign(static_cast<std::size_t>(c.rails), 1);
  for (int d = 0; d < t.numDomains(); ++d) {
    for (int l = 0; l < t.domainSize(d); ++l) {
      const int r = t.rankAt(d, l), h = l % c.rails;
      std::byte* dst = c.recv() + c.userOffset(r, f);
      if (r == t.rank()) {
        if (dst != c.send() + own) copyBytes(dst, c.send() + own, bytes);
      } else if (d == t.domain()) {
        if (st.in == Buffer::Window) waitPeer(c.ctx, l, kFlagStaged, f.epoch);
        copyFromPeer(c, f, st.in, l, 0, own, dst, bytes);
      } else {
        waitPeer(c.ctx, h, kFlagReduced, f.epoch);
        const std::size_t slot = before[h] + (l - h) / c.rails;
        copyFromPeer(c, f, Buffer::Window, h, slot * bytes, 0, dst, bytes);
      }
    }
    if (d != t.domain())
      for (int h = 0; h < c.rails; ++h) before[h] += (t.domainSize(d) - h + c.rails - 1) / c.rails;
  }
}

// All-to-all: whether another rank of the domain reads this rank's block for rank `block` from
// its window. Out of place nobody does for its own block, nor (hierarchical, Pieces::Routes)
// for those it sends across itself as a rail member (rail_steps.cpp); in place every block is
// staged, since the arrivals overwrite the send buffer.
bool readByPeers(const Call& c, const Step& st, int block) {
  const Topology& t = c.ctx.topo;
  if (c.send() == c.recv()) return true;
  if (block == t.rank()) return false;
  return st.pieces == Pieces::DomainRoutes || t.domainOf(block) == t.domain() || c.me >= c.rails ||
         t.localRankOf(block) % c.rails != c.me;
}

// All-to-all: every incoming block, from its source's staging inside the domain (its own from
// its send buffer: out of place it was not staged, in place it is where it belongs), from the
// arrivals of this rank's rail member otherwise, unless that is this rank: they arrived in place
// (see rail_steps.cpp for their order). Only the domain's blocks (Pieces::DomainRoutes, staged
// by local rank): the others arrive in place (cross_steps.cpp).
void gatherRoutes(Call& c, const Step& st, Fragment& f) {
  const Topology& t = c.ctx.topo;
  const std::size_t bytes = f.count * c.es, n = t.size();
  const int holder = c.me % c.rails;
  const bool domainOnly = st.pieces == Pieces::DomainRoutes;
  const std::size_t staged = static_cast<std::size_t>(domainOnly ? c.me : t.rank()) * bytes;  // in each source's window
  std::size_t arrivals = n;  // where the blocks from domain d start in the holder's window
  for (int d = 0; d < t.numDomains(); ++d) {
    if (d == t.domain()) {
      for (int l = 0; l < c.k; ++l) {
        const int source = t.rankAt(d, l);
        std::byte* dst = c.recv() + c.userOffset(source, f);
        if (l == c.me && st.in == Buffer::Window) {
          if (c.send() != c.recv()) copyBytes(dst, c.send() + c.userOffset(t.rank(), f), bytes);
          continue;
        }
        if (st.in == Buffer::Window) waitPeer(c.ctx, l, kFlagStaged, f.epoch);
        copyFromPeer(c, f, st.in, l, staged, c.userOffset(t.rank(), f), dst, bytes);
      }
      continue;
    }
    if (domainOnly) continue;
    const std::size_t sources = t.domainSize(d), mine = arrivals + static_cast<std::size_t>(c.me / c.rails) * sources;
    arrivals += sources * ((c.k - holder + c.rails - 1) / c.rails);
    if (holder == c.me) continue;
    waitPeer(c.ctx, holder, kFlagReduced, f.epoch);
    for (std::size_t l = 0; l < sources; ++l)
      copyFromPeer(c, f, Buffer::Window, holder, (mine + l) * bytes, 0, c.recv() + c.userOffset(t.rankAt(d, int(l)), f),
                   bytes);
  }
}

}  // namespace

// A rank stages what its peers read: not a piece of an allreduce or a reduce-scatter it reduces
// itself, which the reduction reads from its send buffer (reduceOverDomain), nor an all-to-all
// block nobody else reads. A reduce stages its whole fragment: a rail member's reduction writes
// its slice where it staged it (its window, for the root to copy), and unstaged, those writes
// missed the cache: 4 MiB on 2 ranks took 533-550 us against 294-318.
void stage(Call& c, const Step& st, Fragment& f) {
  const Collective coll = c.plan.coll;
  if (coll == Collective::Broadcast && !c.isRoot()) return;  // only the root has data
  const Topology& t = c.ctx.topo;
  const bool reduces = coll == Collective::AllReduce || coll == Collective::Barrier;  // a vector it reduces
  const bool member = c.me < c.rails;  // a rank beyond the rails reduces nothing
  std::byte* win = c.window(c.me, f);
  const std::size_t bytes = f.count * c.es;
  if (coll != Collective::ReduceScatter && coll != Collective::AllToAll) {
    // A vector: for an allreduce every slice but the one this rank reduces.
    if (reduces && member) {
      auto [b, e] = partition(f.count, c.rails, c.me);
      copyBytes(win, c.send() + c.userOffset(0, f), b * c.es);
      copyBytes(win + e * c.es, c.send() + c.userOffset(0, f, e), (f.count - e) * c.es);
    } else {
      copyBytes(win, c.send() + c.userOffset(0, f), bytes);
    }
    return c.ctx.domain.signal(kFlagStaged, f.epoch);
  }
  // Every rank's block; with DomainRoutes those for its domain's ranks, by local rank.
  const bool domainOnly = st.pieces == Pieces::DomainRoutes;
  const std::size_t blocks = domainOnly ? c.k : t.size();
  for (std::size_t b = 0; b < blocks; ++b) {
    const int block = domainOnly ? t.rankAt(t.domain(), static_cast<int>(b)) : static_cast<int>(b);
    if (coll == Collective::AllToAll ? !readByPeers(c, st, block)
                                     : member && t.localRankOf(block) % c.rails == c.me)  // handled here
      continue;
    copyBytes(win + b * bytes, c.send() + c.userOffset(static_cast<std::size_t>(block), f), bytes);
  }
  c.ctx.domain.signal(kFlagStaged, f.epoch);
}

void domainReduce(Call& c, const Step& st, Fragment& f) {
  if (c.me >= c.rails) return;  // only rail members hold pieces
  if (st.in == Buffer::Window) waitAll(c, kFlagStaged, f.epoch);
  const Topology& t = c.ctx.topo;
  if (st.pieces == Pieces::Vector) {
    auto [b, e] = partition(f.count, c.rails, c.me);
    std::byte* dst = c.slice(st.out, f, b);
    // Into the root's receive buffer (zero copy): the root's data first, it may be the destination.
    const int first = st.out == Buffer::PeerRecv ? c.rootLocal : c.me;
    reduceOverDomain(c, f, st.in, b * c.es, c.userOffset(0, f, b), dst, e - b, first);
    c.finishAvg(st, dst, e - b);
    return;
  }
  // Blocks: those of the local ranks l with l % rails == me, in rank order.
  for (int block = 0, h = 0; block < t.size(); ++block) {
    if (t.localRankOf(block) % c.rails != c.me) continue;
    std::byte* dst = st.out == Buffer::Accumulate ? c.accumulate(f) + h++ * f.count * c.es : c.finalBlock(f, block);
    reduceOverDomain(c, f, st.in, block * f.count * c.es, c.userOffset(block, f), dst, f.count, c.me);
    c.finishAvg(st, dst, f.count);
  }
}

void publish(Call& c, const Step& st, Fragment& f) {
  if (c.me >= c.rails) return;
  if (st.in == Buffer::Recv) {  // the allreduce's slice, out of the receive buffer
    auto [b, e] = partition(f.count, c.rails, c.me);
    copyBytes(c.window(c.me, f) + b * c.es, c.slice(Buffer::Recv, f, b), (e - b) * c.es);
  }
  c.ctx.domain.signal(kFlagReduced, f.epoch);
}

void domainGather(Call& c, const Step& st, Fragment& f) {
  switch (c.plan.coll) {
    case Collective::AllReduce:  // every slice but this rank's own, computed in place
    case Collective::Barrier:
      return copySlices(c, f, st.in, c.me);
    case Collective::Broadcast:
      return gatherBroadcast(c, st, f);
    case Collective::Reduce:  // the root copies the slices of its domain's rail members
      return c.isRoot() ? copySlices(c, f, Buffer::Window, c.me) : void();
    case Collective::ReduceScatter:
      return gatherOwnBlock(c, f);
    case Collective::AllGather:
      return gatherBlocks(c, st, f);
    case Collective::AllToAll:
      return gatherRoutes(c, st, f);
    default:
      break;
  }
}

}  // namespace tiercc::steps
