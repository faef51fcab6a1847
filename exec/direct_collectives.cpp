// The direct collectives of one domain (see direct.hpp). Each rank pulls what it needs from
// its peers' buffers and writes only its own (reduce writes the root's, which is symmetric):
//   allreduce       two-shot: rank j reduces slice j of every send buffer into its receive
//                   buffer (flag Reduced), then copies every other slice from its owner's;
//                   pipelined by 1 MiB chunks of the slices
//   reduce_scatter  rank j reduces block j of every send buffer into its receive buffer
//   reduce          rank j reduces slice j of every send buffer into the root's receive buffer
//   allgather       every rank copies every peer's block straight from the peer's send buffer
//   alltoall        every rank copies block `me` of every peer's send buffer (not in place:
//                   a rank would overwrite blocks its peers have yet to read)
//   broadcast       every rank copies the root's buffer
// Symmetric buffers are read in place (zero copy); ordinary ones through cross-memory attach
// (one copy; reductions read chunks into cache-sized scratch first). The descriptor round checks
// that every rank passed the same size, datatype, op and root before any peer's buffer is read.
// Reductions start with the operand that may alias the destination (in place) and go on in
// local-rank order; each slice is computed by one rank only, so every rank gets the same bits.
#include <algorithm>
#include <cstring>

#include "exec/direct.hpp"
#include "exec/round.hpp"
#include "core/reduce.hpp"

namespace tiercc {
namespace {

constexpr std::size_t kCrossMemoryChunk = 1 << 20;  // reduction chunks read into scratch: cache-sized, few syscalls
constexpr std::size_t kPipelineChunk = 1 << 20;     // allreduce: bytes of each slice per pipelined round
// Cross-memory attach pays a system call and page pinning per read: it beats the staged copies
// (cache-resident windows) only from these sizes on (measured on the 2-core host, see
// docs/performance.md; allreduce: kCrossMemoryMinReduce). Symmetric buffers go direct from
// kDirectMinBytes (direct.cpp).
constexpr std::size_t kCrossMemoryMinCopy = 256 << 10;  // allgather, all-to-all, broadcast
constexpr std::size_t kNoCrossMemory = SIZE_MAX;        // zero copy only

using Desc = BufferDescriptor;

// dst[0, n) = op over sources, in the order given; only sources[0] may alias dst. `source(i, off,
// len)` returns a pointer to `len` bytes at byte `off` of source i (possibly read into scratch).
template <typename Source>
void reduceSources(std::byte* dst, int numSources, Source source, std::size_t n, std::size_t chunk, std::size_t es,
                   DataType dt, ReduceOp op) {
  for (std::size_t c = 0; c < n; c += chunk) {
    const std::size_t len = std::min(chunk, n - c), off = c * es;
    const std::byte* first = source(0, off, len * es);
    const std::byte* second = source(1, off, len * es);
    if (first == dst + off)
      reduceInto(dst + off, second, len, dt, op);  // in place: the two-operand kernel
    else
      reduce3(dst + off, first, second, len, dt, op);
    for (int i = 2; i < numSources; ++i) reduceInto(dst + off, source(i, off, len * es), len, dt, op);
  }
}

}  // namespace

void reduceOwnFirst(CollContext& ctx, DirectCall& call, const std::byte* own, std::size_t base, std::byte* dst,
                    std::size_t n, DataType dt, ReduceOp op) {
  const int k = ctx.domain.size(), me = ctx.domain.localRank();
  const std::size_t es = dataTypeSize(dt);
  auto peerAt = [&](int i) { return i == 0 ? me : (me + i) % k; };  // own, then the others from me + 1
  if (call.path() == DirectPath::Symmetric) {
    reduceSources(
        dst, k,
        [&](int i, std::size_t off, std::size_t) { return i == 0 ? own + off : call.peerSend(peerAt(i)) + base + off; },
        n, n ? n : 1, es, dt, op);
    ctx.movedUp((k - 1) * n * es);
    return;
  }
  std::byte* scratch = ctx.scratch.accumulate.data();
  const std::size_t chunk = std::max<std::size_t>(1, std::min(kCrossMemoryChunk, ctx.scratch.accumulate.size()) / es);
  reduceSources(
      dst, k,
      [&](int i, std::size_t off, std::size_t len) -> const std::byte* {
        if (i == 0) return own + off;
        call.copyFromSend(peerAt(i), base + off, scratch, len);
        return scratch;
      },
      n, chunk, es, dt, op);
}

bool directAllreduce(CollContext& ctx, const void* send, void* recv, std::size_t count, DataType dt, ReduceOp op) {
  const std::size_t es = dataTypeSize(dt), bytes = count * es;
  if (!directWorthTrying(ctx, bytes, kCrossMemoryMinReduce)) return runsStaged(ctx);
  DirectCall call(ctx, {bytes, static_cast<int>(dt), static_cast<int>(op)}, send, bytes, recv, bytes);
  auto both = [](int, const Desc& d) { return d.has(Desc::kSendSymmetric) && d.has(Desc::kRecvSymmetric); };
  if (call.choose(both, bytes >= kCrossMemoryMinReduce) == DirectPath::Staged) {
    call.abandon();
    return false;
  }
  Domain& dom = ctx.domain;
  const int k = dom.size(), me = dom.localRank();
  const auto* in = static_cast<const std::byte*>(send);
  auto* out = static_cast<std::byte*>(recv);
  // Pipelined by chunks of every slice: a peer copies chunk r of our slice right after we
  // reduced it, while it is still in cache. Round r raises Reduced to the call's epoch + r.
  const std::size_t chunk = std::max<std::size_t>(1, kPipelineChunk / es);
  const std::size_t largestSlice = partition(count, k, 0).second;
  const auto rounds = static_cast<std::uint32_t>(std::max<std::size_t>(1, (largestSlice + chunk - 1) / chunk));
  const std::uint32_t first = call.claimEpochs(rounds);
  auto chunkOf = [&](int j, std::uint32_t r) {
    auto [b, e] = partition(count, k, j);
    const std::size_t cb = std::min(e, b + r * chunk);
    return std::make_pair(cb, std::min(e, cb + chunk));
  };
  for (std::uint32_t r = 0; r < rounds; ++r) {
    call.renewDeadline();
    auto [b, e] = chunkOf(me, r);
    if (e > b) {
      reduceOwnFirst(ctx, call, in + b * es, b * es, out + b * es, e - b, dt, op);
      if (op == ReduceOp::Avg) finishAvg(out + b * es, e - b, dt, ctx.topo.size());
    }
    dom.signal(kFlagReduced, first + r);
    for (int i = 1; i < k; ++i) {
      const int j = (me + i) % k;
      auto [jb, je] = chunkOf(j, r);
      waitPeer(ctx, j, kFlagReduced, first + r);
      call.copyFromRecv(j, jb * es, out + jb * es, (je - jb) * es);
    }
  }
  call.finish();
  return true;
}

bool directReduceScatter(CollContext& ctx, const void* send, void* recv, std::size_t blockCount, DataType dt,
                         ReduceOp op) {
  const int k = ctx.domain.size(), me = ctx.domain.localRank();
  const std::size_t es = dataTypeSize(dt), blockBytes = blockCount * es;
  if (!directWorthTrying(ctx, blockBytes * k, kNoCrossMemory)) return runsStaged(ctx);
  DirectCall call(ctx, {blockBytes * k, static_cast<int>(dt), static_cast<int>(op)}, send, blockBytes * k, recv,
                  blockBytes);
  if (call.choose([](int, const Desc& d) { return d.has(Desc::kSendSymmetric); }, false) == DirectPath::Staged) {
    call.abandon();
    return false;
  }
  auto* out = static_cast<std::byte*>(recv);
  reduceOwnFirst(ctx, call, static_cast<const std::byte*>(send) + me * blockBytes, me * blockBytes, out, blockCount, dt,
                 op);
  if (op == ReduceOp::Avg) finishAvg(out, blockCount, dt, ctx.topo.size());
  call.finish();
  return true;
}

bool directReduce(CollContext& ctx, const void* send, void* recv, std::size_t count, DataType dt, ReduceOp op,
                  int root) {
  const std::size_t es = dataTypeSize(dt), bytes = count * es;
  if (!directWorthTrying(ctx, bytes, kNoCrossMemory)) return runsStaged(ctx);
  Domain& dom = ctx.domain;
  const int k = dom.size(), me = dom.localRank(), rootLocal = ctx.topo.localRankOf(root);
  DirectCall call(ctx, {bytes, static_cast<int>(dt), static_cast<int>(op), root}, send, bytes,
                  me == rootLocal ? recv : nullptr, me == rootLocal ? bytes : 0);
  auto readable = [&](int p, const Desc& d) {
    return d.has(Desc::kSendSymmetric) && (p != rootLocal || d.has(Desc::kRecvSymmetric));
  };
  if (call.choose(readable, false) == DirectPath::Staged) {
    call.abandon();
    return false;
  }
  auto [b, e] = partition(count, k, me);
  if (e > b) {
    std::byte* dst = (me == rootLocal ? static_cast<std::byte*>(recv) : call.peerRecv(rootLocal)) + b * es;
    // The root's input first: in place, it is the destination.
    auto source = [&](int i) {
      const int p = i == 0 ? rootLocal : (i <= rootLocal ? i - 1 : i);
      return p == me ? static_cast<const std::byte*>(send) : call.peerSend(p);
    };
    reduceSources(
        dst, k, [&](int i, std::size_t off, std::size_t) { return source(i) + b * es + off; }, e - b, e - b, es, dt,
        op);
    if (op == ReduceOp::Avg) finishAvg(dst, e - b, dt, ctx.topo.size());
    ctx.movedUp((k - 1) * (e - b) * es);
  }
  call.finish();
  return true;
}

bool directAllgather(CollContext& ctx, const void* send, void* recv, std::size_t blockCount, DataType dt) {
  const int k = ctx.domain.size(), me = ctx.domain.localRank();
  const std::size_t blockBytes = blockCount * dataTypeSize(dt);
  if (!directWorthTrying(ctx, blockBytes * k, kCrossMemoryMinCopy)) return runsStaged(ctx);
  DirectCall call(ctx, {blockBytes * k, static_cast<int>(dt)}, send, blockBytes, recv, blockBytes * k);
  if (call.choose([](int, const Desc& d) { return d.has(Desc::kSendSymmetric); },
                  blockBytes * k >= kCrossMemoryMinCopy) == DirectPath::Staged) {
    call.abandon();
    return false;
  }
  auto* out = static_cast<std::byte*>(recv);
  if (send != out + me * blockBytes) std::memcpy(out + me * blockBytes, send, blockBytes);
  for (int i = 1; i < k; ++i) {
    const int p = (me + i) % k;
    call.copyFromSend(p, 0, out + p * blockBytes, blockBytes);
  }
  call.finish();
  return true;
}

bool directAlltoall(CollContext& ctx, const void* send, void* recv, std::size_t blockCount, DataType dt) {
  const int k = ctx.domain.size(), me = ctx.domain.localRank();
  const std::size_t blockBytes = blockCount * dataTypeSize(dt);
  if (!directWorthTrying(ctx, blockBytes * k, kCrossMemoryMinCopy)) return runsStaged(ctx);
  DirectCall call(ctx, {blockBytes * k, static_cast<int>(dt)}, send, blockBytes * k, recv, blockBytes * k);
  auto readable = [](int, const Desc& d) { return d.has(Desc::kSendSymmetric); };
  const bool inPlace = !call.all([](int, const Desc& d) { return !d.has(Desc::kInPlace); });
  if (inPlace || call.choose(readable, blockBytes * k >= kCrossMemoryMinCopy) == DirectPath::Staged) {
    call.abandon();
    return false;
  }
  auto* out = static_cast<std::byte*>(recv);
  std::memcpy(out + me * blockBytes, static_cast<const std::byte*>(send) + me * blockBytes, blockBytes);
  for (int i = 1; i < k; ++i) {
    const int p = (me + i) % k;
    call.copyFromSend(p, me * blockBytes, out + p * blockBytes, blockBytes);
  }
  call.finish();
  return true;
}

bool directBroadcast(CollContext& ctx, const void* send, void* recv, std::size_t count, DataType dt, int root) {
  const std::size_t bytes = count * dataTypeSize(dt);
  if (!directWorthTrying(ctx, bytes, kCrossMemoryMinCopy)) return runsStaged(ctx);
  const int me = ctx.domain.localRank(), rootLocal = ctx.topo.localRankOf(root);
  const bool isRoot = me == rootLocal;
  DirectCall call(ctx, {bytes, static_cast<int>(dt), -1, root}, isRoot ? send : nullptr, isRoot ? bytes : 0, recv,
                  bytes);
  auto readable = [&](int p, const Desc& d) { return p != rootLocal || d.has(Desc::kSendSymmetric); };
  if (call.choose(readable, bytes >= kCrossMemoryMinCopy) == DirectPath::Staged) {
    call.abandon();
    return false;
  }
  if (!isRoot)
    call.copyFromSend(rootLocal, 0, recv, bytes);
  else if (send != recv)
    std::memcpy(recv, send, bytes);
  call.finish();
  return true;
}

}  // namespace tiercc
