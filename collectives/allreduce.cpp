// The first allreduce: hierarchical and rail-parallel, so that each domain sends the lower
// bound 2(D-1)/D x S across the slow tier, spread over all of its rails.
//
// The message is processed in rounds of one window each. Per round, with k ranks per domain
// and r = min domain size rails:
//   1. every rank copies its input chunk into its window            (flag Staged = epoch)
//   2. local rank j < r reduces slice j from every window, in local-rank order, into scratch
//   3. across domains, rail j allreduces slice j: a direct reduce-scatter then allgather
//      among the D ranks of the rail (each reduces one sub-slice, in domain order)
//   4. the owner copies the final slice into its window            (flag Reduced = epoch)
//   5. every rank copies every slice into its output              (flag Released = epoch)
// A rank overwrites its window only after every peer released the previous round.
#include <cstring>

#include "collectives/direct.hpp"
#include "collectives/round.hpp"
#include "core/reduce.hpp"

namespace tiercc {
namespace {

struct Round {
  std::size_t offset = 0;  // first element of the chunk
  std::size_t count = 0;   // elements in the chunk
  std::uint64_t chunk = 0;
};

// Step 3: allreduce `buf` (count elements) among the ranks of this rank's rail.
void railAllreduce(CollContext& ctx, std::byte* buf, std::size_t count, std::size_t es, DataType dt,
                   ReduceOp op, const Round& round) {
  const Topology& t = ctx.topo;
  const int numDomains = t.numDomains(), myDomain = t.domain(), rail = t.localRank();
  std::byte* rx = ctx.scratch.receive.data();
  auto [myBegin, myEnd] = partition(count, numDomains, myDomain);
  const std::size_t myBytes = (myEnd - myBegin) * es;

  // Reduce-scatter: sub-slice d goes to the rail's rank in domain d; ours arrives in rx[d].
  TransferBatch scatter(ctx);
  for (int d = 0; d < numDomains; ++d) {
    if (d == myDomain) continue;
    auto [b, e] = partition(count, numDomains, d);
    scatter.send(t.rankAt(d, rail), roundTag(ctx, round.chunk, 0), buf + b * es, (e - b) * es);
    scatter.recv(t.rankAt(d, rail), roundTag(ctx, round.chunk, 0), rx + d * myBytes, myBytes);
  }
  scatter.wait();

  // Reduce our sub-slice in domain order, so the result does not depend on who computes it.
  std::memcpy(rx + myDomain * myBytes, buf + myBegin * es, myBytes);
  std::byte* mine = buf + myBegin * es;
  const std::size_t n = myEnd - myBegin;
  reduce3(mine, rx, rx + myBytes, n, dt, op);
  for (int d = 2; d < numDomains; ++d) reduceInto(mine, rx + d * myBytes, n, dt, op);

  // Allgather: our reduced sub-slice to every rail peer, theirs straight into place.
  TransferBatch gather(ctx);
  for (int d = 0; d < numDomains; ++d) {
    if (d == myDomain) continue;
    auto [b, e] = partition(count, numDomains, d);
    gather.send(t.rankAt(d, rail), roundTag(ctx, round.chunk, 1), mine, myBytes);
    gather.recv(t.rankAt(d, rail), roundTag(ctx, round.chunk, 1), buf + b * es, (e - b) * es);
  }
  gather.wait();
}

void runRound(CollContext& ctx, const std::byte* send, std::byte* recv, std::size_t es, DataType dt,
              ReduceOp op, const Round& round) {
  Domain& dom = ctx.domain;
  const int k = dom.size(), me = dom.localRank(), rails = ctx.topo.minDomainSize();

  // 1. Stage, once every peer has finished reading our window from the previous round.
  const std::uint32_t epoch = beginRound(ctx);
  std::memcpy(dom.window(me), send + round.offset * es, round.count * es);
  dom.signal(kFlagStaged, epoch);

  // 2-4. Owners of a slice reduce it inside the domain, then across domains along their rail.
  if (me < rails) {
    auto [b, e] = partition(round.count, rails, me);
    const std::size_t n = e - b, sliceOff = b * es;
    std::byte* acc = ctx.scratch.accumulate.data();
    for (int p = 0; p < k; ++p) waitPeer(ctx, p, kFlagStaged, epoch);
    if (k == 1) {
      std::memcpy(acc, dom.window(0) + sliceOff, n * es);
    } else {
      reduce3(acc, dom.window(0) + sliceOff, dom.window(1) + sliceOff, n, dt, op);
      for (int p = 2; p < k; ++p) reduceInto(acc, dom.window(p) + sliceOff, n, dt, op);
    }
    ctx.movedUp((k - 1) * n * es);
    if (ctx.topo.numDomains() > 1 && n > 0) railAllreduce(ctx, acc, n, es, dt, op, round);
    if (op == ReduceOp::Avg) finishAvg(acc, n, dt, ctx.topo.size());
    std::memcpy(dom.window(me) + sliceOff, acc, n * es);
    dom.signal(kFlagReduced, epoch);
  }

  // 5. Gather every slice into the output.
  for (int j = 0; j < rails; ++j) {
    auto [b, e] = partition(round.count, rails, j);
    if (j != me) {
      waitPeer(ctx, j, kFlagReduced, epoch);
      ctx.movedUp((e - b) * es);
    }
    std::memcpy(recv + (round.offset + b) * es, dom.window(j) + b * es, (e - b) * es);
  }
  endRound(ctx, epoch);
}

}  // namespace

void allreduceHierarchical(CollContext& ctx, const void* send, void* recv, std::size_t count,
                           DataType dt, ReduceOp op) {
  if (directAllreduce(ctx, send, recv, count, dt, op)) return;
  const std::size_t es = dataTypeSize(dt);
  const std::size_t perRound = ctx.domain.windowBytes() / es;
  const auto* in = static_cast<const std::byte*>(send);
  auto* out = static_cast<std::byte*>(recv);
  Round round;
  for (std::size_t offset = 0; offset < count; offset += perRound, ++round.chunk) {
    round.offset = offset;
    round.count = std::min(perRound, count - offset);
    runRound(ctx, in, out, es, dt, op, round);
  }
  const int D = ctx.topo.numDomains();
  const double domainBound = 2.0 * (D - 1) / D * static_cast<double>(count * es);
  ctx.stats.scaleOutBoundBytes += static_cast<std::uint64_t>(domainBound / ctx.topo.domainSize());
}

}  // namespace tiercc
