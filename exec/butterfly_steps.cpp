// Butterfly steps over all ranks (plan/algorithms/butterfly.cpp, pattern::Butterfly): the fold
// of the ranks beyond the largest power of two, the halving and doubling rounds, and the
// unfold. The butterfly works in the output; at every round both peers compute op(lower virtual
// rank's data, higher's), and each block's final value is computed once and then copied, so
// every rank ends with the same bits.
#include "core/copy.hpp"
#include "core/reduce.hpp"
#include "exec/steps.hpp"
#include "plan/pattern/halving_doubling.hpp"
#include "plan/pattern/pattern.hpp"

namespace tiercc::steps {
namespace {

// mine = op(lower virtual rank's, higher's) of mine and what arrived from virtual rank `peer`.
void reduceOrdered(Call& c, int v, int peer, std::byte* mine, const std::byte* arrived, std::size_t n) {
  if (v < peer)
    reduce3(mine, mine, arrived, n, c.args.dt, c.args.op);
  else
    reduce3(mine, arrived, mine, n, c.args.dt, c.args.op);
}

// Blocks [r.begin, r.end) of the butterfly's p2 blocks of a fragment of n, as (byte offset, bytes).
std::pair<std::size_t, std::size_t> bytesOf(const Call& c, std::size_t n, int p2, pattern::BlockRange r) {
  const std::size_t b = pattern::blockBegin(n, p2, r.begin), e = pattern::blockBegin(n, p2, r.end);
  return {b * c.es, (e - b) * c.es};
}

}  // namespace

void fold(Call& c, const Step&, Fragment& f) {
  const pattern::Butterfly bf(c.ctx.topo.size());
  const int me = c.ctx.topo.rank(), partner = bf.foldPartner(me);
  const std::byte* input = c.send() + f.offset * c.es;
  std::byte* base = c.recv() + f.offset * c.es;
  // A folding rank keeps its input where it is and receives the result into the output.
  if (!bf.folds(me) && input != base) copyBytes(base, input, f.count * c.es);
  if (partner < 0) return;
  std::byte* rx = c.ctx.scratch.receive.data();
  const std::size_t piece = c.ctx.scratch.receive.size() / c.es;
  c.ctx.renewDeadline();
  TransferBatch& batch = c.newBatch(f);
  for (std::size_t at = 0, i = 0; at < f.count; at += piece, ++i) {
    const std::size_t len = std::min(piece, f.count - at);
    if (bf.folds(me)) {
      batch.send(partner, c.tag(f, i), input + at * c.es, len * c.es);
    } else {
      c.ctx.renewDeadline();
      batch.recv(partner, c.tag(f, i), rx, len * c.es);
      batch.wait();
      reduce3(base + at * c.es, rx, base + at * c.es, len, c.args.dt, c.args.op);
    }
  }
  batch.wait();
}

void halvingReduce(Call& c, const Step& st, Fragment& f) {
  const pattern::Butterfly bf(c.ctx.topo.size());
  const int v = bf.virtualRank(c.ctx.topo.rank()), s = pattern::ceilLog2(st.param);
  if (v < 0) return;
  const int pv = bf.peer(v, s), p2 = bf.participants();
  std::byte* base = c.recv() + f.offset * c.es;
  std::byte* rx = c.ctx.scratch.receive.data();
  auto [sendAt, sendLen] = bytesOf(c, f.count, p2, bf.sent(v, s));
  auto [keepAt, keepLen] = bytesOf(c, f.count, p2, bf.kept(v, s));
  c.exchange(f, 0, bf.realRank(pv), base + sendAt, sendLen, bf.realRank(pv), rx, keepLen);
  reduceOrdered(c, v, pv, base + keepAt, rx, keepLen / c.es);
  if (!st.finalizes) return;
  const int owned = bf.ownedBlock(v);
  auto [at, len] = bytesOf(c, f.count, p2, {owned, owned + 1});
  c.finishAvg(st, base + at, len / c.es);
}

void doublingGather(Call& c, const Step& st, Fragment& f) {
  const pattern::Butterfly bf(c.ctx.topo.size());
  const int v = bf.virtualRank(c.ctx.topo.rank()), s = pattern::ceilLog2(st.param);
  if (v < 0) return;
  const int pv = bf.peer(v, s), p2 = bf.participants();
  std::byte* base = c.recv() + f.offset * c.es;
  auto [sendAt, sendLen] = bytesOf(c, f.count, p2, bf.kept(v, s));
  auto [recvAt, recvLen] = bytesOf(c, f.count, p2, bf.sent(v, s));
  c.exchange(f, 0, bf.realRank(pv), base + sendAt, sendLen, bf.realRank(pv), base + recvAt, recvLen);
}

void doublingReduce(Call& c, const Step& st, Fragment& f) {
  const pattern::Butterfly bf(c.ctx.topo.size());
  const int v = bf.virtualRank(c.ctx.topo.rank()), s = pattern::ceilLog2(st.param);
  if (v < 0) return;
  const int pv = bf.peer(v, s);
  std::byte* base = c.recv() + f.offset * c.es;
  std::byte* rx = c.ctx.scratch.receive.data();
  c.exchange(f, 0, bf.realRank(pv), base, f.count * c.es, bf.realRank(pv), rx, f.count * c.es);
  reduceOrdered(c, v, pv, base, rx, f.count);
  c.finishAvg(st, base, f.count);
}

void unfold(Call& c, const Step&, Fragment& f) {
  const pattern::Butterfly bf(c.ctx.topo.size());
  const int me = c.ctx.topo.rank(), partner = bf.foldPartner(me);
  if (partner < 0 || f.count == 0) return;
  std::byte* base = c.recv() + f.offset * c.es;
  const std::size_t bytes = f.count * c.es;
  c.exchange(f, 0, partner, base, bf.folds(me) ? 0 : bytes, partner, base, bf.folds(me) ? bytes : 0);
}

}  // namespace tiercc::steps
