// Hierarchical all-to-all for mixture-of-experts traffic. Per round, a chunk of every block:
// each rank stages its N outgoing blocks in its window. Blocks for ranks of the same domain are
// copied straight from the source's window. Blocks for another domain travel on the rail of the
// destination's local rank l' (rail l' % rails): that rail's member in the source domain packs
// every block of its domain bound for those ranks into ONE message per destination domain, and
// its peer there unpacks into its window, from which the destinations copy. So the slow tier
// carries each cross-domain byte once, in few large messages, on every rail at once.
//
// Across domains two rounds are in flight, each in half of the window and of the packing
// scratch (as in allreduce.cpp): a rank stages and packs round j while round j-1's messages are
// on the rails, posts round j's behind them, and only then copies round j-1 out.
#include <cstring>
#include <optional>

#include "exec/direct.hpp"
#include "exec/round.hpp"

namespace tiercc {
namespace {

// Destinations in `domain` served by `rail`: local ranks rail, rail + rails, ...
int railDests(const Topology& t, int domain, int rail, int rails) {
  int k = t.domainSize(domain);
  return rail < k ? (k - rail + rails - 1) / rails : 0;
}

// Blocks, in units of one chunk, that rail `rail` of `domain` receives from other domains;
// `before` (if given) gets the offset of each source domain's message.
std::size_t arrivalBlocks(const Topology& t, int domain, int rail, int rails, std::vector<std::size_t>* before) {
  std::size_t total = 0;
  if (before) before->assign(t.numDomains(), 0);
  for (int d = 0; d < t.numDomains(); ++d) {
    if (d == domain) continue;
    if (before) (*before)[d] = total;
    total += static_cast<std::size_t>(t.domainSize(d)) * railDests(t, domain, rail, rails);
  }
  return total;
}

class HierarchicalAlltoall {
 public:
  HierarchicalAlltoall(CollContext& ctx, const void* send, void* recv, std::size_t blockCount, DataType dt)
      : ctx_(ctx),
        t_(ctx.topo),
        dom_(ctx.domain),
        in_(static_cast<const std::byte*>(send)),
        out_(static_cast<std::byte*>(recv)),
        blockCount_(blockCount),
        es_(dataTypeSize(dt)),
        n_(t_.size()),
        k_(dom_.size()),
        me_(dom_.localRank()),
        rails_(t_.minDomainSize()),
        slots_(t_.numDomains() > 1 ? 2 : 1) {
    if (me_ < rails_) arrivalBlocks(t_, t_.domain(), me_, rails_, &myArrivalBase_);
    arrivalBlocks(t_, t_.domain(), me_ % rails_, rails_, &holderBase_);
  }

  void run() {
    const std::size_t perRound = roundElements();
    std::uint64_t chunk = 0;
    for (std::size_t offset = 0; offset < blockCount_; offset += perRound, ++chunk) {
      Round& r = rounds_[chunk % slots_];
      r = Round{chunk, offset, std::min(perRound, blockCount_ - offset) * es_, 0};
      stageAndPost(r);
      if (slots_ == 1) {
        finish(r);
      } else if (chunk > 0) {
        finish(rounds_[(chunk - 1) % 2]);
      }
    }
    if (slots_ == 2 && chunk > 0) finish(rounds_[(chunk - 1) % 2]);
  }

 private:
  struct Round {
    std::uint64_t chunk = 0;
    std::size_t offset = 0;  // first element of the round's chunk of every block
    std::size_t bytes = 0;   // of each block's chunk
    std::uint32_t epoch = 0;
  };

  // A slot of the window holds the N staged chunks and the arrivals; a slot of the scratch the
  // packed messages. Every rail of every domain must fit.
  std::size_t roundElements() const {
    std::size_t maxArrivals = 0, maxPacked = 0;
    for (int d = 0; d < t_.numDomains(); ++d)
      for (int j = 0; j < rails_; ++j) {
        maxArrivals = std::max(maxArrivals, arrivalBlocks(t_, d, j, rails_, nullptr));
        std::size_t packed = 0;
        for (int d2 = 0; d2 < t_.numDomains(); ++d2)
          if (d2 != d) packed += static_cast<std::size_t>(t_.domainSize(d)) * railDests(t_, d2, j, rails_);
        maxPacked = std::max(maxPacked, packed);
      }
    std::size_t perRound = elementsPerRound(dom_.windowBytes() / slots_, n_ + maxArrivals, es_);
    if (maxPacked)
      perRound = std::min(perRound, elementsPerRound(ctx_.scratch.accumulate.size() / slots_, maxPacked, es_));
    return perRound;
  }

  std::byte* window(int peer, const Round& r) {
    return dom_.window(peer) + (r.chunk % slots_) * (dom_.windowBytes() / slots_);
  }
  std::byte* arrivals(int peer, const Round& r) { return window(peer, r) + n_ * r.bytes; }
  std::byte* packing(const Round& r) {
    return ctx_.scratch.accumulate.data() + (r.chunk % slots_) * (ctx_.scratch.accumulate.size() / slots_);
  }

  // Stages this rank's chunks; a rail member then packs its domain's blocks per destination
  // domain and posts one message to each, and the receives of theirs.
  void stageAndPost(Round& r) {
    r.epoch = r.chunk == 0 || slots_ == 1 ? beginRound(ctx_) : beginRoundReusing(ctx_, 2);
    for (int d = 0; d < n_; ++d)
      std::memcpy(window(me_, r) + d * r.bytes, in_ + (d * blockCount_ + r.offset) * es_, r.bytes);
    dom_.signal(kFlagStaged, r.epoch);
    std::optional<TransferBatch>& batch = batches_[r.chunk % slots_];
    batch.reset();
    if (t_.numDomains() == 1 || me_ >= rails_) return;
    for (int p = 0; p < k_; ++p) waitPeer(ctx_, p, kFlagStaged, r.epoch);
    batch.emplace(ctx_);
    std::byte* packed = packing(r);
    for (int d = 0; d < t_.numDomains(); ++d) {
      if (d == t_.domain()) continue;
      std::byte* message = packed;
      for (int l2 = me_; l2 < t_.domainSize(d); l2 += rails_)
        for (int l = 0; l < k_; ++l) {
          std::memcpy(packed, window(l, r) + t_.rankAt(d, l2) * r.bytes, r.bytes);
          packed += r.bytes;
          if (l != me_) ctx_.movedUp(r.bytes);
        }
      if (packed > message) batch->send(t_.rankAt(d, me_), roundTag(ctx_, r.chunk, 0), message, packed - message);
      const std::size_t incoming =
          static_cast<std::size_t>(t_.domainSize(d)) * railDests(t_, t_.domain(), me_, rails_) * r.bytes;
      if (incoming)
        batch->recv(t_.rankAt(d, me_), roundTag(ctx_, r.chunk, 0), arrivals(me_, r) + myArrivalBase_[d] * r.bytes,
                    incoming);
    }
  }

  // A rail member publishes its arrivals; then every rank copies its blocks into place.
  void finish(const Round& r) {
    if (std::optional<TransferBatch>& batch = batches_[r.chunk % slots_]) {  // rail members across domains
      batch->wait();
      dom_.signal(kFlagReduced, r.epoch);
    }
    for (int s = 0; s < n_; ++s) {
      const int sd = t_.domainOf(s), sl = t_.localRankOf(s);
      const std::byte* src;
      int holder;
      if (sd == t_.domain()) {
        holder = sl;
        waitPeer(ctx_, holder, kFlagStaged, r.epoch);
        src = window(holder, r) + t_.rank() * r.bytes;
      } else {
        holder = me_ % rails_;
        waitPeer(ctx_, holder, kFlagReduced, r.epoch);
        const std::size_t block = holderBase_[sd] + static_cast<std::size_t>(me_ / rails_) * t_.domainSize(sd) + sl;
        src = arrivals(holder, r) + block * r.bytes;
      }
      std::memcpy(out_ + (s * blockCount_ + r.offset) * es_, src, r.bytes);
      if (holder != me_) ctx_.movedUp(r.bytes);
    }
    endRound(ctx_, r.epoch);
  }

  CollContext& ctx_;
  const Topology& t_;
  Domain& dom_;
  const std::byte* in_;
  std::byte* out_;
  std::size_t blockCount_, es_;
  int n_, k_, me_, rails_;
  std::size_t slots_;
  std::vector<std::size_t> myArrivalBase_, holderBase_;  // as rail member; as destination
  Round rounds_[2];
  std::optional<TransferBatch> batches_[2];
};

}  // namespace

void alltoallHierarchical(CollContext& ctx, const void* send, void* recv, std::size_t blockCount, DataType dt) {
  if (directAlltoall(ctx, send, recv, blockCount, dt)) return;
  HierarchicalAlltoall(ctx, send, recv, blockCount, dt).run();
  const int n = ctx.topo.size(), k = ctx.domain.size();
  ctx.stats.scaleOutBoundBytes += static_cast<std::uint64_t>(n - k) * blockCount * dataTypeSize(dt);
}

}  // namespace tiercc
