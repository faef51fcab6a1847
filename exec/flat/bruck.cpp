// Bruck's allgather and all-to-all over a group (pattern/bruck.hpp): ceil(log2 p) steps at
// distance 2^k for any p, one message per step, for small messages where latency dominates.
//
// Each step packs the blocks it sends (a fragment of each) into the accumulate scratch and
// receives into the receive scratch, then unpacks: fragments are sized so that the largest
// step's blocks fit. Allgather keeps blocks at their final place in the output throughout.
// All-to-all works in the output: rotate so position j holds the block for rank me + j, run
// the steps, then swap position j with position me - j (an involution, so in place, no
// temporary) to put the block from each rank at its index.
#include "plan/pattern/bruck.hpp"

#include <algorithm>

#include "exec/bound.hpp"
#include "exec/flat/flat_detail.hpp"

namespace tiercc {

void bruckAllgather(CollContext& ctx, const Group& g, const void* send, void* recv, std::size_t blockCount,
                    DataType dt) {
  const int p = g.size(), me = g.me;
  const std::size_t es = dataTypeSize(dt), blockBytes = blockCount * es;
  auto* out = static_cast<std::byte*>(recv);
  // In place, send == recv + me x block: already where it belongs.
  flat::copyUnlessSame(out + static_cast<std::size_t>(me) * blockBytes, send, blockBytes);
  if (p > 1 && blockCount > 0) {
    flat::requireTransport(ctx, g);
    const int steps = pattern::bruckSteps(p);
    int most = 0;
    for (int k = 0; k < steps; ++k) most = std::max(most, pattern::bruckAllgatherStep(p, me, k).count);
    const std::size_t perFragment = flat::fragmentElements(ctx, static_cast<std::size_t>(most), es, true);
    std::byte* packed = ctx.scratch.accumulate.data();
    std::byte* rx = ctx.scratch.receive.data();
    std::uint64_t fragment = 0;
    for (std::size_t offset = 0; offset < blockCount; offset += perFragment, ++fragment) {
      const std::size_t bytes = std::min(perFragment, blockCount - offset) * es;
      auto piece = [&](int block) { return out + static_cast<std::size_t>(block) * blockBytes + offset * es; };
      for (int k = 0; k < steps; ++k) {
        flat::renewDeadline(ctx);
        const pattern::BruckAllgatherStep st = pattern::bruckAllgatherStep(p, me, k);
        for (int j = 0; j < st.count; ++j) std::memcpy(packed + j * bytes, piece((st.firstSent + j) % p), bytes);
        const std::uint64_t tag = flat::tag(ctx, fragment, k, steps);
        TransferBatch batch(ctx);
        batch.send(g.ranks[st.sendTo], tag, packed, st.count * bytes);
        batch.recv(g.ranks[st.recvFrom], tag, rx, st.count * bytes);
        batch.wait();
        for (int j = 0; j < st.count; ++j) std::memcpy(piece((st.firstReceived + j) % p), rx + j * bytes, bytes);
      }
    }
  }
  if (flat::isWholeCollective(ctx, g)) ctx.stats.scaleOutBoundBytes += bound::allgather(ctx.topo, blockBytes);
}

void bruckAlltoall(CollContext& ctx, const Group& g, const void* send, void* recv, std::size_t blockCount,
                   DataType dt) {
  const int p = g.size(), me = g.me;
  const std::size_t es = dataTypeSize(dt), blockBytes = blockCount * es;
  const auto* in = static_cast<const std::byte*>(send);
  auto* out = static_cast<std::byte*>(recv);
  auto at = [&](int block) { return out + static_cast<std::size_t>(block) * blockBytes; };
  if (p == 1) {
    flat::copyUnlessSame(out, in, blockBytes);
  } else if (blockCount > 0) {
    flat::requireTransport(ctx, g);
    // Position j <- the block for rank me + j.
    if (in == out)
      std::rotate(out, at(me), at(p));
    else
      for (int j = 0; j < p; ++j)
        std::memcpy(at(j), in + static_cast<std::size_t>((me + j) % p) * blockBytes, blockBytes);

    const int steps = pattern::bruckSteps(p);
    const std::size_t perFragment =
        flat::fragmentElements(ctx, static_cast<std::size_t>(pattern::bruckAlltoallMaxBlocks(p)), es, true);
    std::byte* packed = ctx.scratch.accumulate.data();
    std::byte* rx = ctx.scratch.receive.data();
    std::uint64_t fragment = 0;
    for (std::size_t offset = 0; offset < blockCount; offset += perFragment, ++fragment) {
      const std::size_t bytes = std::min(perFragment, blockCount - offset) * es;
      for (int k = 0; k < steps; ++k) {
        flat::renewDeadline(ctx);
        const std::size_t len = static_cast<std::size_t>(pattern::bruckAlltoallBlocks(p, k)) * bytes;
        std::size_t i = 0;
        for (int j = pattern::bruckAlltoallFirst(k); j < p; j = pattern::bruckAlltoallNext(j, k), ++i)
          std::memcpy(packed + i * bytes, at(j) + offset * es, bytes);
        const std::uint64_t tag = flat::tag(ctx, fragment, k, steps);
        TransferBatch batch(ctx);
        batch.send(g.ranks[pattern::bruckAlltoallSendTo(p, me, k)], tag, packed, len);
        batch.recv(g.ranks[pattern::bruckAlltoallRecvFrom(p, me, k)], tag, rx, len);
        batch.wait();
        i = 0;
        for (int j = pattern::bruckAlltoallFirst(k); j < p; j = pattern::bruckAlltoallNext(j, k), ++i)
          std::memcpy(at(j) + offset * es, rx + i * bytes, bytes);
      }
    }
    // Position j holds the block from rank me - j; it belongs at index me - j.
    for (int j = 0; j < p; ++j) {
      const int source = pattern::bruckAlltoallFinalSource(p, me, j);
      if (j < source) std::swap_ranges(at(j), at(j) + blockBytes, at(source));
    }
  }
  if (flat::isWholeCollective(ctx, g)) ctx.stats.scaleOutBoundBytes += bound::alltoall(ctx.topo, blockBytes);
}

}  // namespace tiercc
