// The steps across domains that are not along the rails (see steps.hpp): every rank with every
// rank of the other domains. The cross exchange runs once per call: it posts its receives and
// sends before the domain's steps and completes them after the last fragment, so the copies
// inside the domain run while its blocks are on the wire. Each pair of ranks has one message
// each way, so posts between them match in any order.
#include "core/copy.hpp"
#include "exec/steps.hpp"

namespace tiercc::steps {

// All-to-all, whole blocks: the one for each rank of another domain from the send buffer, and
// theirs into the receive buffer; receives first, so that the blocks land in place. In place
// they land in the arrivals buffer, in rank order, while this rank's own blocks leave from
// where they will go.
void crossExchangePost(Call& c, const Step&, Fragment& f) {
  const Topology& t = c.ctx.topo;
  const int n = t.size(), rank = t.rank(), mine = t.domain();
  const std::size_t bytes = c.plan.count * c.es;
  const bool inPlace = c.send() == c.recv() && bytes > 0;
  if (inPlace) c.state.arrivals.resize((n - c.k) * bytes);
  // Empty blocks travel too (a mismatch is reported, not waited for), and need an address.
  std::byte* none = c.ctx.scratch.receive.data();
  const std::uint64_t tag = c.tag(f);
  TransferBatch& batch = c.newBatch(f);
  std::byte* arrival = c.state.arrivals.data();
  for (int r = 0; r < n; ++r) {
    if (t.domainOf(r) == mine) continue;
    batch.recv(r, tag, bytes == 0 ? none : inPlace ? arrival : c.recv() + r * bytes, bytes);
    arrival += inPlace ? bytes : 0;
  }
  for (int i = 1; i < n; ++i) {  // from the next rank on: the ranks do not all send to rank 0 first
    const int r = (rank + i) % n;
    if (t.domainOf(r) != mine) batch.send(r, tag, bytes == 0 ? none : c.send() + r * bytes, bytes);
  }
}

void crossExchangeFinish(Call& c, const Step&, Fragment& f) {
  c.postedBatch(f).wait();
  if (c.send() != c.recv() || c.plan.count == 0) return;
  const Topology& t = c.ctx.topo;
  const std::size_t bytes = c.plan.count * c.es;
  const std::byte* arrival = c.state.arrivals.data();
  for (int r = 0; r < t.size(); ++r)
    if (t.domainOf(r) != t.domain()) {
      copyBytes(c.recv() + r * bytes, arrival, bytes);
      arrival += bytes;
    }
}

}  // namespace tiercc::steps
