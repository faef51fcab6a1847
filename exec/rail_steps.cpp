// The steps along the rails (see steps.hpp): rank (d, j) exchanges with rank (d', j) of every
// other domain d', every rail at once. A rail step posts its sends and receives in `run` and
// completes them in `finish`, so that the executor can run another fragment's domain steps in
// between; posts between two ranks come in the same order on both sides (the plan is the same
// on every rank of a rail), which is how the transport matches them. Arrivals are reduced in
// domain order, one rank per piece, so every domain ends with the same bits.
#include "core/copy.hpp"
#include "core/reduce.hpp"
#include "exec/steps.hpp"
#include "plan/pattern/pattern.hpp"

namespace tiercc::steps {
namespace {

using pattern::partition;

// dst = op over `sources(d)` for d in domain order (dst may be one of them); Avg if final.
template <class Source>
void reduceDomains(Call& c, const Step& st, std::byte* dst, Source sources, std::size_t n) {
  const int D = c.ctx.topo.numDomains();
  reduce3(dst, sources(0), sources(1), n, c.args.dt, c.args.op);
  for (int d = 2; d < D; ++d) reduceInto(dst, sources(d), n, c.args.dt, c.args.op);
  c.finishAvg(st, dst, n);
}

// Reduce-scatter: the blocks this rail member reduces (local ranks l % rails == me), in rank
// order, calling f(block, index among them).
template <class F>
void forHandledBlocks(const Call& c, F f) {
  const Topology& t = c.ctx.topo;
  for (int block = 0, h = 0; block < t.size(); ++block)
    if (t.localRankOf(block) % c.rails == c.me) f(block, h++);
}

}  // namespace

void railReducePost(Call& c, const Step& st, Fragment& f) {
  if (c.me >= c.rails) return;
  const Topology& t = c.ctx.topo;
  const int D = t.numDomains(), mine = t.domain();
  const std::uint64_t tag = c.tag(f);
  TransferBatch& batch = c.newBatch(f);
  std::byte* rx = c.receive(f);
  if (st.pieces == Pieces::Blocks) {  // reduce-scatter: partials to the blocks' domains
    const std::size_t bytes = f.count * c.es;
    forHandledBlocks(c, [&](int block, int h) {
      if (t.domainOf(block) != mine)
        batch.send(t.rankAt(t.domainOf(block), c.me), tag, c.accumulate(f) + h * bytes, bytes);
    });
    std::size_t slot = 0;
    forHandledBlocks(c, [&](int block, int) {
      if (t.domainOf(block) != mine) return;
      for (int d = 0; d < D; ++d)
        if (d != mine) batch.recv(c.railPeer(d), tag, rx + slot++ * bytes, bytes);
    });
    return;
  }
  auto [b, e] = partition(f.count, c.rails, c.me);
  const std::size_t n = e - b;
  std::byte* slice = c.slice(st.in, f, b);
  if (c.plan.root >= 0) {  // reduce: partials to the root's domain
    const int rootDomain = t.domainOf(c.args.root);
    if (mine != rootDomain) return batch.send(t.rankAt(rootDomain, c.me), tag, slice, n * c.es);
    for (int d = 0, slot = 0; d < D; ++d)
      if (d != mine) batch.recv(c.railPeer(d), tag, rx + slot++ * n * c.es, n * c.es);
    return;
  }
  // Allreduce: sub-slice d of the slice to domain d; theirs of ours arrive one per domain.
  auto [mb, me] = partition(n, D, mine);
  const std::size_t myBytes = (me - mb) * c.es;
  for (int d = 0; d < D; ++d) {
    if (d == mine) continue;
    auto [sb, se] = partition(n, D, d);
    batch.send(c.railPeer(d), tag, slice + sb * c.es, (se - sb) * c.es);
    batch.recv(c.railPeer(d), tag, rx + d * myBytes, myBytes);
  }
}

void railReduceFinish(Call& c, const Step& st, Fragment& f) {
  if (c.me >= c.rails) return;
  c.postedBatch(f).wait();
  const Topology& t = c.ctx.topo;
  const int mine = t.domain();
  std::byte* rx = c.receive(f);
  if (st.pieces == Pieces::Blocks) {
    const std::size_t bytes = f.count * c.es, others = t.numDomains() - 1;
    std::size_t i = 0;
    forHandledBlocks(c, [&](int block, int h) {
      if (t.domainOf(block) != mine) return;
      const std::byte* arrived = rx + i++ * others * bytes;
      auto source = [&](int d) {
        return d == mine ? c.accumulate(f) + h * bytes : arrived + (d < mine ? d : d - 1) * bytes;
      };
      reduceDomains(c, st, c.finalBlock(f, block), source, f.count);
    });
    return;
  }
  auto [b, e] = partition(f.count, c.rails, c.me);
  const std::size_t n = e - b;
  std::byte* slice = c.slice(st.in, f, b);
  if (c.plan.root >= 0) {
    if (mine != t.domainOf(c.args.root)) return;
    auto source = [&](int d) -> const std::byte* { return d == mine ? slice : rx + (d < mine ? d : d - 1) * n * c.es; };
    reduceDomains(c, st, c.slice(st.out, f, b), source, n);
    return;
  }
  // Our own sub-slice is read in place (the result may overwrite an operand), unless it comes
  // after the first two domains: the running result would have overwritten it by then.
  auto [mb, me] = partition(n, t.numDomains(), mine);
  const std::size_t myBytes = (me - mb) * c.es;
  std::byte* own = slice + mb * c.es;
  if (mine >= 2) copyBytes(rx + mine * myBytes, own, myBytes);
  auto source = [&](int d) -> const std::byte* { return d == mine && d < 2 ? own : rx + d * myBytes; };
  reduceDomains(c, st, own, source, me - mb);
}

void railCopyPost(Call& c, const Step& st, Fragment& f) {
  if (c.me >= c.rails) return;
  const Topology& t = c.ctx.topo;
  const int D = t.numDomains(), mine = t.domain();
  const std::uint64_t tag = c.tag(f);
  const std::size_t bytes = f.count * c.es;
  TransferBatch& batch = c.newBatch(f);
  switch (st.pieces) {
    case Pieces::Whole: {  // one-shot: the domain's result to every rail peer
      std::byte* results = c.receive(f);
      for (int d = 0; d < D; ++d) {
        if (d == mine) continue;
        batch.send(c.railPeer(d), tag, results + mine * bytes, bytes);
        batch.recv(c.railPeer(d), tag, results + d * bytes, bytes);
      }
      return;
    }
    case Pieces::Vector: {
      auto [b, e] = partition(f.count, c.rails, c.me);
      if (c.plan.root >= 0) {  // broadcast: the root's domain sends slice me of the root's window
        const int rootDomain = t.domainOf(c.args.root);
        if (mine != rootDomain)
          return batch.recv(t.rankAt(rootDomain, c.me), tag, c.window(c.me, f) + b * c.es, (e - b) * c.es);
        waitPeer(c.ctx, c.rootLocal, kFlagStaged, f.epoch);
        const std::byte* from = c.window(c.rootLocal, f) + b * c.es;
        for (int d = 0; d < D; ++d) {
          if (d == mine) continue;
          batch.send(c.railPeer(d), tag, from, (e - b) * c.es);
          if (c.me != c.rootLocal) c.ctx.movedUp((e - b) * c.es);  // read from the root's window
        }
        return;
      }
      // Allreduce: our reduced sub-slice to every domain, theirs into place.
      std::byte* slice = c.slice(st.in, f, b);
      auto [mb, me] = partition(e - b, D, mine);
      for (int d = 0; d < D; ++d) {
        if (d == mine) continue;
        auto [sb, se] = partition(e - b, D, d);
        batch.send(c.railPeer(d), tag, slice + mb * c.es, (me - mb) * c.es);
        batch.recv(c.railPeer(d), tag, slice + sb * c.es, (se - sb) * c.es);
      }
      return;
    }
    case Pieces::Blocks: {  // allgather: the blocks this rail serves, from their windows
      for (int d = 0; d < D; ++d) {
        if (d == mine) continue;
        for (int l = c.me; l < c.k; l += c.rails) {
          waitPeer(c.ctx, l, kFlagStaged, f.epoch);
          batch.send(c.railPeer(d), tag, c.window(l, f), bytes);
          if (l != c.me) c.ctx.movedUp(bytes);
        }
      }
      std::byte* slot = c.window(c.me, f) + bytes;  // arrival slots 1, 2, ... in domain order
      for (int d = 0; d < D; ++d)
        if (d != mine)
          for (int l = c.me; l < t.domainSize(d); l += c.rails, slot += bytes)
            batch.recv(c.railPeer(d), tag, slot, bytes);
      return;
    }
    case Pieces::Routes: {  // all-to-all: every block for the ranks this rail serves, one message each
      if (bytes == 0) return;
      // Out of place this rank's own blocks leave from its send buffer; in place the arrivals
      // overwrite it, so they leave from its window, staged with the others.
      const bool fromSend = c.send() != c.recv();
      for (int l = 0; l < c.k; ++l) waitPeer(c.ctx, l, kFlagStaged, f.epoch);  // once, not per block
      for (int d = 0; d < D; ++d) {
        if (d == mine) continue;
        for (int dest = c.me; dest < t.domainSize(d); dest += c.rails) {
          const std::size_t block = static_cast<std::size_t>(t.rankAt(d, dest));
          for (int l = 0; l < c.k; ++l) {
            if (l == c.me && fromSend) {
              batch.send(c.railPeer(d), tag, c.send() + c.userOffset(block, f), bytes);
              continue;
            }
            batch.send(c.railPeer(d), tag, c.window(l, f) + block * bytes, bytes);
            if (l != c.me) c.ctx.movedUp(bytes);
          }
        }
      }
      // In the same order: for each rank served, from each source. This rank's own land in
      // place (every block of its send buffer was staged or has left before any arrives: a
      // receive is posted after this fragment's Stage); those of the others it serves in the
      // window after the staged blocks, for them to copy.
      std::byte* arrivals = c.window(c.me, f) + t.size() * bytes;
      for (int d = 0; d < D; ++d) {
        if (d == mine) continue;
        for (int served = c.me; served < c.k; served += c.rails)
          for (int l = 0; l < t.domainSize(d); ++l, arrivals += bytes) {
            std::byte* into = served == c.me ? c.recv() + c.userOffset(t.rankAt(d, l), f) : arrivals;
            batch.recv(c.railPeer(d), tag, into, bytes);
          }
      }
      return;
    }
    case Pieces::None:
    case Pieces::DomainRoutes:  // no part on the rails
      return;
  }
}

void railCopyFinish(Call& c, const Step&, Fragment& f) {
  if (c.me < c.rails) c.postedBatch(f).wait();
}

void localReduce(Call& c, const Step& st, Fragment& f) {
  const std::size_t bytes = f.count * c.es;
  const std::byte* results = c.receive(f);
  reduceDomains(
      c, st, c.recv(), [&](int d) { return results + d * bytes; }, f.count);
}

}  // namespace tiercc::steps
