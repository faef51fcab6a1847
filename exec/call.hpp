// One call as the executor runs it: the arguments the public API validated, the plan, the
// fragments in flight, and where each of the plan's buffers is for a fragment.
#pragma once

#include <memory>
#include <vector>

#include "exec/context.hpp"
#include "exec/direct.hpp"
#include "exec/round.hpp"

namespace tiercc {

/// One collective call, as the public API received it (validated).
struct CallArgs {
  Collective coll = Collective::AllReduce;
  const void* send = nullptr;
  void* recv = nullptr;
  std::size_t count = 0;  ///< as in Request::count
  DataType dt = DataType::F32;
  ReduceOp op = ReduceOp::Sum;
  int root = 0;  ///< broadcast, reduce
  int peer = 0;  ///< send, recv
  // alltoallv only: element counts and displacements per rank
  const std::size_t* sendCounts = nullptr;
  const std::size_t* sendDispls = nullptr;
  const std::size_t* recvCounts = nullptr;
  const std::size_t* recvDispls = nullptr;
};

/// One fragment of a plan in flight (plain data: the executor sets every field when it starts one).
struct Fragment {
  std::uint32_t index;
  std::size_t offset;    ///< first element of each block's chunk
  std::size_t count;     ///< elements of each block's chunk
  std::uint32_t epoch;   ///< its round in the domain's flags
  std::uint32_t slot;    ///< its part of the window and the scratch
  std::size_t next;      ///< the next step to run
  std::uint64_t posted;  ///< bit i: step i was posted and is not complete yet
};

/// What the executor keeps per communicator, so that a call allocates nothing once warm.
struct ExecState {
  DirectRound direct;
  std::vector<std::unique_ptr<TransferBatch>> batches;  ///< [slot x steps + step]
  std::vector<int> order;                               ///< a reduction's local ranks, in order
  /// The linear all-to-all in place: blocks from other domains, until this rank's own have left
  /// (kept at the largest such call's size).
  std::vector<std::byte> arrivals;
};

/// A call being run: the plan, the arguments, the tiers, and the plan's buffers per fragment.
class Call {
 public:
  Call(ExecContext& ctx, ExecState& state, const Plan& plan, const CallArgs& args);

  ExecContext& ctx;
  ExecState& state;
  const Plan& plan;
  const CallArgs& args;
  const std::size_t es;  ///< bytes per element
  const int me;          ///< local rank
  const int k;           ///< ranks in this domain
  const int rails;       ///< the smallest domain's size
  const int rootLocal;   ///< the root's local rank in its domain (broadcast, reduce), else -1
  std::size_t step = 0;  ///< the index of the step running now

  const std::byte* send() const { return static_cast<const std::byte*>(args.send); }
  std::byte* recv() const { return static_cast<std::byte*>(args.recv); }
  /// Byte offset of element `at` of block `block`'s chunk of `f` in a caller's buffer.
  std::size_t userOffset(std::size_t block, const Fragment& f, std::size_t at = 0) const {
    return (block * plan.count + f.offset + at) * es;
  }
  /// Local rank `peer`'s window, from the start of f's slot.
  std::byte* window(int peer, const Fragment& f) const {
    return ctx.domain.window(peer) + f.slot * (ctx.domain.windowBytes() / plan.slots);
  }
  std::byte* accumulate(const Fragment& f) const {
    return ctx.scratch.accumulate.data() + f.slot * (ctx.scratch.accumulate.size() / plan.slots);
  }
  std::byte* receive(const Fragment& f) const {
    return ctx.scratch.receive.data() + f.slot * (ctx.scratch.receive.size() / plan.slots);
  }
  /// The running step's transfer batch for f: begun anew (to post), or as posted (to finish).
  TransferBatch& newBatch(const Fragment& f);
  TransferBatch& postedBatch(const Fragment& f);
  /// A flat pattern's round, with a fresh deadline: sends outLen bytes at `out` to rank `to`,
  /// receives inLen at `in` from rank `from` (a side of 0 bytes is skipped: both ends know it),
  /// as message `index` of the running step, and waits for both.
  void exchange(const Fragment& f, std::uint64_t index, int to, const std::byte* out, std::size_t outLen, int from,
                std::byte* in, std::size_t inLen);
  /// Where `st` writes final values of an Avg: divides the n elements at dst by the ranks.
  void finishAvg(const Step& st, std::byte* dst, std::size_t n) const;
  /// The tag of the running step's messages for f.
  std::uint64_t tag(const Fragment& f, std::uint64_t index = 0) const { return messageTag(ctx, f.index, step, index); }
  /// The rank of this rank's rail peer in domain `d`.
  int railPeer(int d) const { return ctx.topo.rankAt(d, me); }
  bool isRoot() const { return ctx.topo.rank() == args.root; }

  // Where a hierarchical collective's final pieces go, the rule the domain and rail steps share:
  // straight into the owner's receive buffer when this rank is its owner, else into this rank's
  // window, for the owner to copy.
  /// A reduce-scatter block this rail member reduced last: the owner's receive buffer, or the
  /// result slot N + l / rails of this rank's window for local rank l.
  std::byte* finalBlock(const Fragment& f, int block) const {
    if (block == ctx.topo.rank()) return recv() + f.offset * es;
    return window(me, f) + (ctx.topo.size() + ctx.topo.localRankOf(block) / rails) * f.count * es;
  }
  /// A vector's slice from element `begin` of f, where `out` says: the scratch, the root's
  /// receive buffer (mapped, on the zero-copy path), or this rank's receive buffer when it needs
  /// the result (allreduce, or the root of a reduce), else its window for the root to copy.
  std::byte* slice(Buffer out, const Fragment& f, std::size_t begin) const {
    if (out == Buffer::Accumulate) return accumulate(f);
    if (out == Buffer::PeerRecv)
      return (isRoot() ? recv() : state.direct.peerRecv(rootLocal)) + userOffset(0, f, begin);
    if (plan.root < 0 || isRoot()) return recv() + userOffset(0, f, begin);
    return window(me, f) + begin * es;
  }
};

}  // namespace tiercc
