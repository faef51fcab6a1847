// Ring steps over all ranks (plan/algorithms/ring.cpp), every message to the ring successor.
// Reduce-scatter: each block is reduced by a fixed chain of ranks, op(partial so far, own
// input), and ends at its owner; in an allreduce the owner's result is then copied around, so
// every rank ends with the same bits. Allgather receives straight into place.
#include "core/copy.hpp"
#include "core/reduce.hpp"
#include "exec/steps.hpp"
#include "plan/pattern/ring.hpp"

namespace tiercc::steps {
namespace {

using pattern::ringNext;
using pattern::ringPrev;

// Allgather of blocks [at(b), at(b) + len(b)) of `buf`, block b ending at rank b: p - 1 rounds.
template <class Block>
void allgatherBlocks(Call& c, const Fragment& f, std::byte* buf, Block block) {
  const int p = c.ctx.topo.size(), me = c.ctx.topo.rank();
  for (int s = 0; s < p - 1; ++s) {
    auto [sendAt, sendLen] = block(pattern::ringAllgatherSendBlock(p, me, s));
    auto [recvAt, recvLen] = block(pattern::ringAllgatherRecvBlock(p, me, s));
    c.exchange(f, s, ringNext(p, me), buf + sendAt, sendLen, ringPrev(p, me), buf + recvAt, recvLen);
  }
}

// An allreduce's blocks: the p parts of the fragment, as (byte offset, bytes).
auto vectorBlocks(const Call& c, const Fragment& f) {
  const std::size_t p = c.ctx.topo.size(), n = f.count, es = c.es;
  return [p, n, es](int b) {
    auto [begin, end] = pattern::partition(n, p, static_cast<std::size_t>(b));
    return std::pair<std::size_t, std::size_t>{begin * es, (end - begin) * es};
  };
}

}  // namespace

void ringReduceScatter(Call& c, const Step& st, Fragment& f) {
  const int p = c.ctx.topo.size(), me = c.ctx.topo.rank();
  const DataType dt = c.args.dt;
  const ReduceOp op = c.args.op;
  std::byte* rx = c.ctx.scratch.receive.data();
  if (c.plan.coll != Collective::ReduceScatter) {  // allreduce: in the output
    std::byte* base = c.recv() + f.offset * c.es;
    if (c.send() != c.recv()) copyBytes(base, c.send() + f.offset * c.es, f.count * c.es);
    auto block = vectorBlocks(c, f);
    for (int s = 0; s < p - 1; ++s) {
      auto [sendAt, sendLen] = block(pattern::ringReduceScatterSendBlock(p, me, s));
      auto [recvAt, recvLen] = block(pattern::ringReduceScatterRecvBlock(p, me, s));
      c.exchange(f, s, ringNext(p, me), base + sendAt, sendLen, ringPrev(p, me), rx, recvLen);
      reduce3(base + recvAt, rx, base + recvAt, recvLen / c.es, dt, op);
    }
    auto [at, len] = block(me);
    return c.finishAvg(st, base + at, len / c.es);
  }
  // Reduce-scatter: the partial this rank passes on next is in the accumulate scratch. In place
  // (recv == send + me x block) works: this rank's own block is read only at the last round, as
  // the final reduction writes it.
  std::byte* acc = c.ctx.scratch.accumulate.data();
  const std::size_t bytes = f.count * c.es;
  auto input = [&](int b) { return c.send() + c.userOffset(static_cast<std::size_t>(b), f); };
  if (p == 1 && c.send() != c.recv()) copyBytes(c.recv() + f.offset * c.es, input(0), bytes);
  for (int s = 0; s < p - 1; ++s) {
    const std::byte* out = s == 0 ? input(pattern::ringReduceScatterSendBlock(p, me, s)) : acc;
    c.exchange(f, s, ringNext(p, me), out, bytes, ringPrev(p, me), rx, bytes);
    std::byte* dst = s == p - 2 ? c.recv() + f.offset * c.es : acc;
    reduce3(dst, rx, input(pattern::ringReduceScatterRecvBlock(p, me, s)), f.count, dt, op);
  }
  c.finishAvg(st, c.recv() + f.offset * c.es, f.count);
}

void ringAllgather(Call& c, const Step&, Fragment& f) {
  if (c.plan.coll != Collective::AllGather)
    return allgatherBlocks(c, f, c.recv() + f.offset * c.es, vectorBlocks(c, f));
  const int me = c.ctx.topo.rank();
  const std::size_t blockBytes = c.plan.count * c.es;
  // In place, send == recv + me x block: already where it belongs.
  std::byte* own = c.recv() + static_cast<std::size_t>(me) * blockBytes;
  if (own != c.send()) copyBytes(own, c.send(), blockBytes);
  if (blockBytes == 0) return;
  allgatherBlocks(c, f, c.recv(), [&](int b) {
    return std::pair<std::size_t, std::size_t>{static_cast<std::size_t>(b) * blockBytes, blockBytes};
  });
}

}  // namespace tiercc::steps
