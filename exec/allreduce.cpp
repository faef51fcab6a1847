// The hierarchical allreduce: rail-parallel, so that each domain sends the lower bound
// 2(D-1)/D x S across the slow tier, spread over all of its rails, and pipelined, so that the
// slow tier is kept busy while the fast tier works.
//
// The message is processed in rounds. Per round, with k ranks per domain and r = min domain
// size rails:
//   1. every rank copies its input chunk into its window            (flag Staged = epoch)
//   2. local rank j < r reduces slice j from every window, in local-rank order, into scratch
//   3. across domains, rail j allreduces slice j: a direct reduce-scatter then allgather
//      among the D ranks of the rail (each reduces one sub-slice, in domain order)
//   4. the owner copies the final slice into its window            (flag Reduced = epoch)
//   5. every rank copies every slice into its output              (flag Released = epoch)
//
// With more than one domain, two rounds are in flight: the window and the scratch buffers are
// split into two slots, and a rank runs round j's steps 1-2 (fast tier) while round j-1's
// allgather (slow tier) is on the wire, then posts round j's reduce-scatter behind it before it
// finishes round j-1. A slow link thus always has the next round's bytes queued; without this
// it idled during every round's local steps. A rank overwrites a slot only after every peer
// released the round that used it last.
//
// Across domains, a domain whose ranks can read each other's buffers (symmetric memory, or
// cross-memory attach from kCrossMemoryMinReduce on) skips the windows: owners reduce their
// slice straight from the peers' send buffers into their own receive buffer, the rail exchange
// runs there, and the peers copy the final slice from it (steps 1, 4 and half of 5's copies
// saved). Rounds, slices and rail messages are the same either way, so each domain decides alone.
#include <algorithm>
#include <cstring>
#include <optional>

#include "exec/direct.hpp"
#include "exec/round.hpp"
#include "core/reduce.hpp"

namespace tiercc {
namespace {

class HierarchicalAllreduce {
 public:
  HierarchicalAllreduce(CollContext& ctx, const void* send, void* recv, DataType dt, ReduceOp op)
      : ctx_(ctx),
        dom_(ctx.domain),
        topo_(ctx.topo),
        in_(static_cast<const std::byte*>(send)),
        out_(static_cast<std::byte*>(recv)),
        dt_(dt),
        op_(op),
        es_(dataTypeSize(dt)),
        me_(dom_.localRank()),
        rails_(topo_.minDomainSize()),
        pipelined_(topo_.numDomains() > 1) {}

  void run(std::size_t count) {
    const std::size_t perRound = roundElements();
    const auto numRounds = static_cast<std::uint32_t>((count + perRound - 1) / perRound);
    if (pipelined_) tryDirect(count, numRounds);
    std::uint64_t chunk = 0;
    for (std::size_t offset = 0; offset < count; offset += perRound, ++chunk) {
      Round& r = rounds_[chunk % slots()];
      r = Round{chunk, offset, std::min(perRound, count - offset), 0};
      stage(r);
      if (!pipelined_) {
        finish(r);
        continue;
      }
      postScatter(r);
      if (chunk > 0) finish(rounds_[(chunk - 1) % 2]);
      reduceAndPostGather(r);
    }
    if (pipelined_ && chunk > 0) finish(rounds_[(chunk - 1) % 2]);
    if (direct_) direct_->finish();  // no peer reads our buffers once we return
  }

 private:
  struct Round {
    std::uint64_t chunk = 0;  // index of the round in this collective
    std::size_t offset = 0;   // first element of the round's chunk
    std::size_t count = 0;    // elements in the chunk
    std::uint32_t epoch = 0;
  };
  struct RailTransfers {  // a round's slow-tier traffic: posted in one step, waited for in another
    std::optional<TransferBatch> scatter, gather;
  };

  int slots() const { return pipelined_ ? 2 : 1; }
  int slotOf(const Round& r) const { return static_cast<int>(r.chunk % slots()); }

  // One slot of the window per round in flight; the receive scratch must also hold a round's
  // D sub-slices, each rounded up to a whole element.
  std::size_t roundElements() const {
    const std::size_t rxSlot = ctx_.scratch.receive.size() / slots();
    const std::size_t rounding = static_cast<std::size_t>(topo_.numDomains()) * es_;
    const std::size_t capacity = std::min(dom_.windowBytes() / slots(), rxSlot > rounding ? rxSlot - rounding : 0);
    return elementsPerRound(capacity, 1, es_);
  }

  std::byte* slot(std::byte* base, std::size_t slotBytes, const Round& r) const {
    return base + static_cast<std::size_t>(slotOf(r)) * slotBytes;
  }
  std::byte* windowSlot(int peer, const Round& r) { return slot(dom_.window(peer), dom_.windowBytes() / slots(), r); }

  // The direct round, when every rank of the domain can read its peers' buffers; the staged
  // rounds otherwise (the same answer on every rank of the domain).
  void tryDirect(std::size_t count, std::uint32_t numRounds) {
    const std::size_t bytes = count * es_;
    if (!directWorthTryingInDomain(ctx_, bytes, kCrossMemoryMinReduce)) return;
    direct_.emplace(ctx_, CallShape{bytes, static_cast<int>(dt_), static_cast<int>(op_)}, in_, bytes, out_, bytes);
    auto symmetric = [](int, const BufferDescriptor& d) {
      return d.has(BufferDescriptor::kSendSymmetric) && d.has(BufferDescriptor::kRecvSymmetric);
    };
    if (direct_->choose(symmetric, bytes >= kCrossMemoryMinReduce) == DirectPath::Staged) {
      direct_->abandon();
      direct_.reset();
      return;
    }
    firstDirectEpoch_ = direct_->claimEpochs(std::max<std::uint32_t>(numRounds, 1));
  }

  // Where an owner's slice is reduced and exchanged along its rail: scratch, or (direct) its
  // place in the receive buffer.
  std::byte* accumulate(const Round& r) {
    if (direct_) return out_ + (r.offset + mySlice(r).first) * es_;
    return slot(ctx_.scratch.accumulate.data(), ctx_.scratch.accumulate.size() / slots(), r);
  }
  std::byte* received(const Round& r) {
    return slot(ctx_.scratch.receive.data(), ctx_.scratch.receive.size() / slots(), r);
  }
  bool owner() const { return me_ < rails_; }
  std::pair<std::size_t, std::size_t> mySlice(const Round& r) const { return partition(r.count, rails_, me_); }

  // Steps 1-2: stage the chunk, then (owners) reduce this rank's slice across the domain.
  void stage(Round& r) {
    if (direct_) return reduceDirect(r);
    // The first round waits for everything before this collective; later ones only for the
    // round that used the same slot.
    r.epoch = r.chunk == 0 || !pipelined_ ? beginRound(ctx_) : beginRoundReusing(ctx_, 2);
    std::memcpy(windowSlot(me_, r), in_ + r.offset * es_, r.count * es_);
    dom_.signal(kFlagStaged, r.epoch);
    if (!owner()) return;
    auto [b, e] = mySlice(r);
    const std::size_t n = e - b, off = b * es_;
    std::byte* acc = accumulate(r);
    const int k = dom_.size();
    for (int p = 0; p < k; ++p) waitPeer(ctx_, p, kFlagStaged, r.epoch);
    if (k == 1) {
      std::memcpy(acc, windowSlot(0, r) + off, n * es_);
    } else {
      reduce3(acc, windowSlot(0, r) + off, windowSlot(1, r) + off, n, dt_, op_);
      for (int p = 2; p < k; ++p) reduceInto(acc, windowSlot(p, r) + off, n, dt_, op_);
    }
    ctx_.movedUp((k - 1) * n * es_);
  }

  // Step 3, first half: sub-slice d of our slice goes to the rail's rank in domain d; theirs
  // of our sub-slice arrive in the receive slot, one per domain.
  void postScatter(const Round& r) {
    RailTransfers& t = rail_[slotOf(r)];
    t.scatter.reset();
    t.gather.reset();
    auto [b, e] = mySlice(r);
    if (!owner() || e == b) return;
    const int D = topo_.numDomains(), myDomain = topo_.domain();
    const std::size_t n = e - b;
    auto [mb, me] = partition(n, D, myDomain);
    const std::size_t myBytes = (me - mb) * es_;  // what each rail peer sends us
    std::byte* acc = accumulate(r);
    std::byte* rx = received(r);
    TransferBatch& batch = t.scatter.emplace(ctx_);
    for (int d = 0; d < D; ++d) {
      if (d == myDomain) continue;
      auto [sb, se] = partition(n, D, d);
      const int peer = topo_.rankAt(d, me_);
      batch.send(peer, roundTag(ctx_, r.chunk, 0), acc + sb * es_, (se - sb) * es_);
      batch.recv(peer, roundTag(ctx_, r.chunk, 0), rx + d * myBytes, myBytes);
    }
  }

  // Step 3, second half: reduce our sub-slice in domain order (so the result does not depend
  // on who computes it), then send it to every rail peer and receive theirs straight into place.
  void reduceAndPostGather(const Round& r) {
    RailTransfers& t = rail_[slotOf(r)];
    if (!t.scatter) return;
    t.scatter->wait();
    auto [b, e] = mySlice(r);
    const int D = topo_.numDomains(), myDomain = topo_.domain();
    const std::size_t n = e - b;
    auto [mb, me] = partition(n, D, myDomain);
    const std::size_t myBytes = (me - mb) * es_;
    std::byte* acc = accumulate(r);
    std::byte* rx = received(r);
    std::byte* mine = acc + mb * es_;
    // Our own sub-slice is read in place (reduce3 may write over an operand), unless it comes
    // after the first two: the running result would have overwritten it by then.
    if (myDomain >= 2) std::memcpy(rx + myDomain * myBytes, mine, myBytes);
    auto source = [&](int d) -> const std::byte* { return d == myDomain && d < 2 ? mine : rx + d * myBytes; };
    reduce3(mine, source(0), source(1), me - mb, dt_, op_);
    for (int d = 2; d < D; ++d) reduceInto(mine, source(d), me - mb, dt_, op_);
    TransferBatch& batch = t.gather.emplace(ctx_);
    for (int d = 0; d < D; ++d) {
      if (d == myDomain) continue;
      auto [sb, se] = partition(n, D, d);
      const int peer = topo_.rankAt(d, me_);
      batch.send(peer, roundTag(ctx_, r.chunk, 1), mine, myBytes);
      batch.recv(peer, roundTag(ctx_, r.chunk, 1), acc + sb * es_, (se - sb) * es_);
    }
  }

  // Direct steps 1-2: the owner reduces its slice from every rank's send buffer into its own
  // receive buffer; there is nothing to stage.
  void reduceDirect(Round& r) {
    direct_->renewDeadline();
    r.epoch = firstDirectEpoch_ + static_cast<std::uint32_t>(r.chunk);
    if (!owner()) return;
    auto [b, e] = mySlice(r);
    const std::size_t at = (r.offset + b) * es_;
    if (e > b) reduceOwnFirst(ctx_, *direct_, in_ + at, at, out_ + at, e - b, dt_, op_);
  }

  // Steps 4-5: publish our final slice, then gather every slice into the output.
  void finish(const Round& r) {
    if (owner()) {
      auto [b, e] = mySlice(r);
      const std::size_t n = e - b;
      RailTransfers& t = rail_[slotOf(r)];
      if (t.gather) t.gather->wait();
      std::byte* acc = accumulate(r);
      if (op_ == ReduceOp::Avg) finishAvg(acc, n, dt_, topo_.size());
      if (!direct_) std::memcpy(windowSlot(me_, r) + b * es_, acc, n * es_);
      dom_.signal(kFlagReduced, r.epoch);
    }
    for (int j = 0; j < rails_; ++j) {
      if (j == me_) continue;
      auto [b, e] = partition(r.count, rails_, j);
      const std::size_t at = (r.offset + b) * es_, len = (e - b) * es_;
      waitPeer(ctx_, j, kFlagReduced, r.epoch);
      if (direct_) {
        direct_->copyFromRecv(j, at, out_ + at, len);  // counts the bytes
      } else {
        std::memcpy(out_ + at, windowSlot(j, r) + b * es_, len);
        ctx_.movedUp(len);
      }
    }
    if (!direct_) {
      if (owner()) {
        auto [b, e] = mySlice(r);
        std::memcpy(out_ + (r.offset + b) * es_, windowSlot(me_, r) + b * es_, (e - b) * es_);
      }
      endRound(ctx_, r.epoch);
    }
  }

  CollContext& ctx_;
  Domain& dom_;
  const Topology& topo_;
  const std::byte* in_;
  std::byte* out_;
  DataType dt_;
  ReduceOp op_;
  std::size_t es_;
  int me_, rails_;
  bool pipelined_;
  Round rounds_[2];
  RailTransfers rail_[2];
  std::optional<DirectCall> direct_;   // the domain reads buffers directly (tryDirect)
  std::uint32_t firstDirectEpoch_ = 0;  // round r of the direct call raises Reduced to this + r
};

}  // namespace

void allreduceHierarchical(CollContext& ctx, const void* send, void* recv, std::size_t count,
                           DataType dt, ReduceOp op) {
  if (directAllreduce(ctx, send, recv, count, dt, op)) return;
  HierarchicalAllreduce(ctx, send, recv, dt, op).run(count);
  const std::size_t es = dataTypeSize(dt);
  const int D = ctx.topo.numDomains();
  const double domainBound = 2.0 * (D - 1) / D * static_cast<double>(count * es);
  ctx.stats.scaleOutBoundBytes += static_cast<std::uint64_t>(domainBound / ctx.topo.domainSize());
}

}  // namespace tiercc
