// K-nomial tree steps over all ranks (plan/algorithms/knomial.cpp, pattern::KnomialTree), one
// fragment at a time: a rank forwards fragment f while its parent sends f + 1. Broadcast
// receives straight into the output and forwards from there, children of the highest level
// first. Reduce accumulates op(own, children...) in the accumulate scratch (the root: in its
// output), children in level order, and passes the partial up; a leaf sends its input as it is.
#include "core/copy.hpp"
#include "core/reduce.hpp"
#include "exec/steps.hpp"
#include "plan/pattern/knomial.hpp"

namespace tiercc::steps {

void knomialBroadcast(Call& c, const Step& st, Fragment& f) {
  const int p = c.ctx.topo.size(), me = c.ctx.topo.rank(), radix = st.param;
  const std::size_t bytes = f.count * c.es;
  std::byte* data = c.recv() + f.offset * c.es;
  if (me == c.args.root && c.send() != c.recv()) copyBytes(data, c.send() + f.offset * c.es, bytes);
  if (p == 1 || bytes == 0) return;
  const pattern::KnomialTree tree(p, c.args.root, radix);
  const int parent = tree.parent(me), level = tree.level(me);
  c.ctx.renewDeadline();
  TransferBatch& batch = c.newBatch(f);
  if (parent >= 0) {
    batch.recv(parent, c.tag(f), data, bytes);
    batch.wait();
  }
  for (int l = level - 1; l >= 0; --l)
    for (int digit = 1; digit < radix; ++digit) {
      const int child = tree.child(me, l, digit);
      if (child < 0) break;
      batch.send(child, c.tag(f), data, bytes);
    }
  batch.wait();
}

void knomialReduce(Call& c, const Step& st, Fragment& f) {
  const int p = c.ctx.topo.size(), me = c.ctx.topo.rank(), radix = st.param;
  const std::size_t bytes = f.count * c.es;
  const std::byte* mine = c.send() + f.offset * c.es;
  if (p == 1) {
    if (c.send() != c.recv())
      copyBytes(c.recv() + f.offset * c.es, mine, bytes);  // Avg over one rank: nothing to divide
    return;
  }
  if (bytes == 0) return;
  const pattern::KnomialTree tree(p, c.args.root, radix);
  const int parent = tree.parent(me), level = tree.level(me);
  c.ctx.renewDeadline();
  TransferBatch& batch = c.newBatch(f);
  if (tree.numChildren(me) == 0) {
    batch.send(parent, c.tag(f), mine, bytes);
    batch.wait();
    return;
  }
  // Only the root writes its output: other ranks' receive buffers stay untouched.
  std::byte* acc = me == c.args.root ? c.recv() + f.offset * c.es : c.ctx.scratch.accumulate.data();
  if (acc != mine) copyBytes(acc, mine, bytes);
  std::byte* rx = c.ctx.scratch.receive.data();
  for (int l = 0; l < level; ++l)
    for (int digit = 1; digit < radix; ++digit) {
      const int child = tree.child(me, l, digit);
      if (child < 0) break;
      c.ctx.renewDeadline();
      batch.recv(child, c.tag(f), rx, bytes);
      batch.wait();
      reduceInto(acc, rx, f.count, c.args.dt, c.args.op);
    }
  if (me == c.args.root) return c.finishAvg(st, acc, f.count);
  batch.send(parent, c.tag(f), acc, bytes);
  batch.wait();
}

}  // namespace tiercc::steps
