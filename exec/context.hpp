// What a collective algorithm runs on: the two tiers through their interfaces, the topology,
// persistent scratch space, and the bookkeeping it must keep (epochs, byte counts).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/deadline.hpp"
#include "core/errors.hpp"
#include "core/link_model.hpp"
#include "plan/topology.hpp"
#include "scaleup-emu/domain.hpp"
#include "tiercc/types.hpp"
#include "transport/transport.hpp"

namespace tiercc {

/// Domain flags as the collectives use them (each rank owns one of each).
enum DomainFlag : int {
  kFlagStaged = 0,    ///< this rank's input for the current round is in its window
  kFlagReduced = 1,   ///< this rank's slice of the round is final, in its window
  kFlagReleased = 2,  ///< this rank has finished reading its peers' windows for the round
};

/// Buffers allocated once per communicator and reused: no allocation per call.
struct Scratch {
  std::vector<std::byte> accumulate;  ///< the slice being reduced (window-sized)
  std::vector<std::byte> receive;     ///< slices arriving from other domains (window-sized)
  /// The last round was one-shot on alternating window halves and saw every domain peer's
  /// Staged flag: a one-shot round next may skip waiting for Released (allreduce_oneshot.cpp).
  /// beginRound clears it.
  bool afterOneShot = false;
  /// ... and it staged in the mailboxes: their sequence words are valid (allreduce_oneshot.cpp).
  bool afterMailboxOneShot = false;
};

/// Algorithm thresholds, read once per communicator (TIERCC_* parameters).
struct Tuning {
  std::size_t allreduceOneShotBytes = 16384;  ///< up to this size, allreduce may run one-shot
  int knomialRadix = 2;                       ///< TIERCC_KNOMIAL_RADIX
};

class Selector;

/// What one call moved, per tier, against its share of the slow-tier bound.
struct CallStats {
  std::uint64_t scaleUpBytes = 0;
  std::uint64_t scaleOutBytes = 0;
  std::uint64_t scaleOutBoundBytes = 0;
  std::string_view algorithm;    ///< the plan's algorithm name (static storage)
  std::string_view scaleUpPath;  ///< "staged", "zero_copy" or "cma" (static storage)
};

struct CollContext {
  const Topology& topo;
  Domain& domain;
  Transport* transport;        ///< null when there is only one domain
  Scratch& scratch;
  std::uint32_t& epoch;        ///< round counter shared by the ranks of the domain
  CallStats& stats;
  std::uint64_t seq;           ///< this collective's sequence number (same on every rank)
  const std::string& what;     ///< "allreduce #12", the start of every error message
  Deadline deadline;            ///< of the current round: renewed by beginRound
  const Tuning& tuning;
  LinkModel* scaleUpLink = nullptr;   ///< paces tier 0 (TIERCC_EMU_SCALEUP_*); null: not paced
  LinkModel* scaleOutLink = nullptr;  ///< paces tier 1 sends (TIERCC_EMU_SCALEOUT_*); null: not paced
  std::chrono::milliseconds timeout{0};  ///< TIERCC_TIMEOUT: each round's waits get this long
  Selector* selector = nullptr;          ///< chooses each call's algorithm (collectives/plan)

  /// This rank has read `bytes` from its domain peers' windows: counts them and, with a link
  /// model, blocks until the modelled scale-up link would have carried them.
  void movedUp(std::size_t bytes) {
    stats.scaleUpBytes += bytes;
    if (scaleUpLink && bytes) scaleUpLink->charge(bytes);
  }
};

/// [begin, end) of part `i` when n items are split into `parts` nearly equal parts.
inline std::pair<std::size_t, std::size_t> partition(std::size_t n, std::size_t parts, std::size_t i) {
  std::size_t base = n / parts, extra = n % parts;
  std::size_t begin = i * base + std::min(i, extra);
  return {begin, begin + base + (i < extra ? 1 : 0)};
}

// The hierarchical collectives, rail-parallel (see each file); the executor
// (exec/executor.hpp) picks between them and the flat ones (exec/flat/). Arguments are
// validated by the caller; in place follows NCCL's definitions.
void allreduceHierarchical(CollContext& ctx, const void* send, void* recv, std::size_t count,
                           DataType dt, ReduceOp op);
/// Latency-optimal allreduce for small messages: one exchange per tier (see allreduce_oneshot.cpp).
void allreduceOneShot(CollContext& ctx, const void* send, void* recv, std::size_t count, DataType dt, ReduceOp op);
void broadcastHierarchical(CollContext& ctx, const void* send, void* recv, std::size_t count, DataType dt,
                           int root);
void reduceHierarchical(CollContext& ctx, const void* send, void* recv, std::size_t count, DataType dt,
                        ReduceOp op, int root);
void allgatherHierarchical(CollContext& ctx, const void* send, void* recv, std::size_t blockCount, DataType dt);
void reduceScatterHierarchical(CollContext& ctx, const void* send, void* recv, std::size_t blockCount,
                               DataType dt, ReduceOp op);
void alltoallHierarchical(CollContext& ctx, const void* send, void* recv, std::size_t blockCount, DataType dt);
/// Point-to-point; pairSeq numbers the messages of one (sender, receiver) pair.
void sendPointToPoint(CollContext& ctx, const void* buf, std::size_t bytes, int peer, std::uint64_t pairSeq);
void recvPointToPoint(CollContext& ctx, void* buf, std::size_t bytes, int peer, std::uint64_t pairSeq);

}  // namespace tiercc
