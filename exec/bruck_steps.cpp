// Bruck steps over all ranks (plan/algorithms/bruck.cpp, pattern/bruck.hpp). Each round packs
// the blocks it sends (a fragment of each) into the accumulate scratch and receives into the
// receive scratch, then unpacks. Allgather keeps blocks at their final place in the output
// throughout. All-to-all works in the output: rotate so position j holds the block for rank
// me + j, run the rounds, then swap position j with position me - j (an involution, so in place,
// no temporary) to put the block from each rank at its index.
#include <algorithm>

#include "core/copy.hpp"
#include "exec/steps.hpp"
#include "plan/pattern/bruck.hpp"

namespace tiercc::steps {

void bruckRotate(Call& c, const Step&, Fragment&) {
  const int p = c.ctx.topo.size(), me = c.ctx.topo.rank();
  const std::size_t blockBytes = c.plan.count * c.es;
  std::byte* out = c.recv();
  if (c.plan.coll == Collective::AllGather) {  // in place, send == recv + me x block: already there
    if (out + me * blockBytes != c.send()) copyBytes(out + me * blockBytes, c.send(), blockBytes);
    return;
  }
  auto at = [&](int block) { return out + static_cast<std::size_t>(block) * blockBytes; };
  if (c.send() == out)
    std::rotate(out, at(me), at(p));
  else
    for (int j = 0; j < p; ++j)
      copyBytes(at(j), c.send() + static_cast<std::size_t>((me + j) % p) * blockBytes, blockBytes);
}

void bruckAllgather(Call& c, const Step& st, Fragment& f) {
  const int p = c.ctx.topo.size(), me = c.ctx.topo.rank();
  const std::size_t bytes = f.count * c.es;
  std::byte* packed = c.ctx.scratch.accumulate.data();
  std::byte* rx = c.ctx.scratch.receive.data();
  auto piece = [&](int block) { return c.recv() + c.userOffset(static_cast<std::size_t>(block), f); };
  const pattern::BruckAllgatherStep round = pattern::bruckAllgatherStep(p, me, st.param);
  for (int j = 0; j < round.count; ++j) copyBytes(packed + j * bytes, piece((round.firstSent + j) % p), bytes);
  c.exchange(f, 0, round.sendTo, packed, round.count * bytes, round.recvFrom, rx, round.count * bytes);
  for (int j = 0; j < round.count; ++j) copyBytes(piece((round.firstReceived + j) % p), rx + j * bytes, bytes);
}

void bruckAlltoall(Call& c, const Step& st, Fragment& f) {
  const int p = c.ctx.topo.size(), me = c.ctx.topo.rank(), k = st.param;
  const std::size_t bytes = f.count * c.es, len = static_cast<std::size_t>(pattern::bruckAlltoallBlocks(p, k)) * bytes;
  std::byte* packed = c.ctx.scratch.accumulate.data();
  std::byte* rx = c.ctx.scratch.receive.data();
  auto piece = [&](int position) { return c.recv() + c.userOffset(static_cast<std::size_t>(position), f); };
  std::size_t i = 0;
  for (int j = pattern::bruckAlltoallFirst(k); j < p; j = pattern::bruckAlltoallNext(j, k), ++i)
    copyBytes(packed + i * bytes, piece(j), bytes);
  c.exchange(f, 0, pattern::bruckAlltoallSendTo(p, me, k), packed, len, pattern::bruckAlltoallRecvFrom(p, me, k), rx,
             len);
  i = 0;
  for (int j = pattern::bruckAlltoallFirst(k); j < p; j = pattern::bruckAlltoallNext(j, k), ++i)
    copyBytes(piece(j), rx + i * bytes, bytes);
}

void bruckPlace(Call& c, const Step&, Fragment&) {
  const int p = c.ctx.topo.size(), me = c.ctx.topo.rank();
  const std::size_t blockBytes = c.plan.count * c.es;
  auto at = [&](int block) { return c.recv() + static_cast<std::size_t>(block) * blockBytes; };
  // Position j holds the block from rank me - j; it belongs at index me - j.
  for (int j = 0; j < p; ++j) {
    const int source = pattern::bruckAlltoallFinalSource(p, me, j);
    if (j < source) std::swap_ranges(at(j), at(j) + blockBytes, at(source));
  }
}

}  // namespace tiercc::steps
