// Allreduce for small messages, where the number of synchronisations matters more than bytes.
// Every rank stages its input, then reads ALL of its domain's windows and reduces them itself
// (in local-rank order, so every rank of a domain gets the same bits): one wait instead of the
// two of reduce-scatter + allgather. Across domains, every rank exchanges the domain's result
// directly with its rail peers and reduces the D results in domain order, so every rank of every
// domain ends with identical bits. Each rail carries the whole message (k times the bound in
// total): the right trade only for small messages, and the statistics say so.
#include <cstring>

#include "collectives/round.hpp"
#include "core/reduce.hpp"

namespace tiercc {

void allreduceOneShot(CollContext& ctx, const void* send, void* recv, std::size_t count, DataType dt, ReduceOp op) {
  const Topology& t = ctx.topo;
  Domain& dom = ctx.domain;
  const std::size_t es = dataTypeSize(dt), bytes = count * es;
  const int k = dom.size(), me = dom.localRank(), numDomains = t.numDomains(), myDomain = t.domain();

  const std::uint32_t epoch = beginRound(ctx);
  std::memcpy(dom.window(me), send, bytes);
  dom.signal(kFlagStaged, epoch);
  for (int p = 0; p < k; ++p) waitPeer(ctx, p, kFlagStaged, epoch);
  // Domain results of every domain, in domain order: ours is computed here, the others arrive.
  std::byte* results = ctx.scratch.receive.data();
  std::byte* ours = results + myDomain * bytes;
  if (k == 1) std::memcpy(ours, dom.window(0), bytes);
  else reduce3(ours, dom.window(0), dom.window(1), count, dt, op);
  for (int p = 2; p < k; ++p) reduceInto(ours, dom.window(p), count, dt, op);
  ctx.movedUp((k - 1) * bytes);
  endRound(ctx, epoch);  // our window may be overwritten from here on; we hold the domain result

  std::byte* out = static_cast<std::byte*>(recv);
  if (numDomains > 1) {
    TransferBatch batch(ctx);
    for (int d = 0; d < numDomains; ++d) {
      if (d == myDomain) continue;
      batch.send(t.rankAt(d, me), roundTag(ctx, 0, 0), ours, bytes);
      batch.recv(t.rankAt(d, me), roundTag(ctx, 0, 0), results + d * bytes, bytes);
    }
    batch.wait();
    reduce3(out, results, results + bytes, count, dt, op);
    for (int d = 2; d < numDomains; ++d) reduceInto(out, results + d * bytes, count, dt, op);
  } else {
    std::memcpy(out, ours, bytes);
  }
  if (op == ReduceOp::Avg) finishAvg(out, count, dt, t.size());
  const double domainBound = 2.0 * (numDomains - 1) / numDomains * static_cast<double>(bytes);
  ctx.stats.scaleOutBoundBytes += static_cast<std::uint64_t>(domainBound / t.domainSize());
}

}  // namespace tiercc
