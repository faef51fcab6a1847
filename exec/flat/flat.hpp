// Flat algorithms: one pattern over a group of ranks, every message on the transport. They are
// the baselines the selector prices against the hierarchical plans (a flat ring ignores the
// tiers, so most of its bytes cross the slow one), and the building blocks of hierarchical
// plans when a group spans domains (one rail, the domain leaders).
//
// Every function is called by every member of `group` with the same arguments (except the
// buffers). Messages go through TransferBatch, which counts each one on the tier its peer is
// on (same domain: scale-up; other domain: scale-out). Large messages are processed in
// fragments that fit the communicator's scratch space: no allocation per call. Scratch used:
// ctx.scratch.receive by all; ctx.scratch.accumulate too by ringReduceScatter, knomialReduce
// and the Bruck pair (so their buffers must not live in it). The pattern math is in
// plan/pattern/; each .cpp says what it does with non-power-of-two groups.
//
// In place follows the public API (NCCL's forms): send == recv, and for allgather
// send == recv + me x block, for reduce-scatter recv == send + me x block. count 0 and groups
// of one work. Avg divides by g.size(). Every rank ends with the same bits.
//
// Slow-tier bound: called over the whole communicator (g.size() == topo.size()), a function
// is the collective and adds this rank's share of its bound to ctx.stats.scaleOutBoundBytes
// (exec/bound.hpp, the formulas of the hierarchical versions); over a subgroup it is a
// step of a larger plan, which records the bound of the whole. pairwiseAlltoallv records none:
// the executor adds it from the counts.
#pragma once

#include <cstddef>
#include <vector>

#include "exec/context.hpp"

namespace tiercc {

/// The ranks a flat algorithm runs among, in pattern order, and this rank's index among them.
struct Group {
  std::vector<int> ranks;  ///< global ranks
  int me = 0;              ///< index of this rank in `ranks`
  int size() const { return static_cast<int>(ranks.size()); }
  /// Every rank of the communicator, in rank order.
  static Group world(const Topology& topo);
};

// Allreduce
void ringAllreduce(CollContext& ctx, const Group& g, const void* send, void* recv, std::size_t count, DataType dt,
                   ReduceOp op);
/// Rabenseifner: recursive-halving reduce-scatter then recursive-doubling allgather; ranks
/// beyond the largest power of two fold into a partner first.
void halvingDoublingAllreduce(CollContext& ctx, const Group& g, const void* send, void* recv, std::size_t count,
                              DataType dt, ReduceOp op);
/// Recursive doubling on the whole vector: log2(p) steps, for small messages.
void recursiveDoublingAllreduce(CollContext& ctx, const Group& g, const void* send, void* recv, std::size_t count,
                                DataType dt, ReduceOp op);

// Reduce-scatter / allgather (blockCount elements per rank, rank order)
void ringReduceScatter(CollContext& ctx, const Group& g, const void* send, void* recv, std::size_t blockCount,
                       DataType dt, ReduceOp op);
void ringAllgather(CollContext& ctx, const Group& g, const void* send, void* recv, std::size_t blockCount,
                   DataType dt);
void bruckAllgather(CollContext& ctx, const Group& g, const void* send, void* recv, std::size_t blockCount,
                    DataType dt);

// Rooted (root is an index into g.ranks; radix >= 2)
void knomialBroadcast(CollContext& ctx, const Group& g, const void* send, void* recv, std::size_t count, DataType dt,
                      int root, int radix);
void knomialReduce(CollContext& ctx, const Group& g, const void* send, void* recv, std::size_t count, DataType dt,
                   ReduceOp op, int root, int radix);

// All-to-all (blockCount elements per destination) and all-to-allv (element counts and
// displacements per rank of g, as in MPI_Alltoallv)
void pairwiseAlltoall(CollContext& ctx, const Group& g, const void* send, void* recv, std::size_t blockCount,
                      DataType dt);
void bruckAlltoall(CollContext& ctx, const Group& g, const void* send, void* recv, std::size_t blockCount,
                   DataType dt);
void pairwiseAlltoallv(CollContext& ctx, const Group& g, const void* send, const std::size_t* sendCounts,
                       const std::size_t* sendDispls, void* recv, const std::size_t* recvCounts,
                       const std::size_t* recvDispls, DataType dt);

/// Dissemination barrier: ceil(log2 p) rounds of empty messages.
void disseminationBarrier(CollContext& ctx, const Group& g);

}  // namespace tiercc
