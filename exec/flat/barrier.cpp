// Dissemination barrier: in round k every rank signals the rank 2^k after it and waits for the
// rank 2^k before it, with empty messages. After ceil(log2 p) rounds every rank has heard,
// directly or not, from every other, so none leaves before all have arrived.
#include "exec/flat/flat_detail.hpp"
#include "plan/pattern/bruck.hpp"

namespace tiercc {

void disseminationBarrier(CollContext& ctx, const Group& g) {
  const int p = g.size(), me = g.me, rounds = pattern::bruckSteps(p);
  flat::requireTransport(ctx, g);
  std::byte* none = ctx.scratch.receive.data();  // zero-length messages still need an address
  for (int k = 0; k < rounds; ++k) {
    flat::renewDeadline(ctx);
    TransferBatch batch(ctx);
    const std::uint64_t tag = flat::tag(ctx, 0, k, rounds);
    batch.send(g.ranks[pattern::disseminationSendTo(p, me, k)], tag, none, 0);
    batch.recv(g.ranks[pattern::disseminationRecvFrom(p, me, k)], tag, none, 0);
    batch.wait();
  }
}

}  // namespace tiercc
