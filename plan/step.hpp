// A step of a plan: one operation on one tier among one group of ranks, with the pieces of data
// it moves, where it reads and writes them, and what it costs. The executor (exec/) runs a step
// by its kind; the cost model prices it from its latency and bytes; tiercc-sim expands its
// exchange rank by rank; the statistics count what it moved.
#pragma once

#include <cstdint>
#include <string>

#include "plan/names.hpp"

namespace tiercc {

enum class StepKind : std::uint8_t {
  // Inside a domain (tier 0), through the windows or straight from peers' buffers.
  Agree,         ///< direct paths, once per call: buffer descriptors in the mailboxes
  Stage,         ///< this rank's input for the fragment into its window; raises Staged
  DomainReduce,  ///< owners reduce their pieces over the domain's inputs
  OneShot,       ///< every rank takes its domain's whole inputs at once (small messages): reduces
                 ///< them (allreduce), or copies its blocks of them (allgather, all-to-all)
  Publish,       ///< holders put their pieces where peers read them; raises Reduced
  DomainGather,  ///< every rank copies its output pieces from where they are held
  Close,         ///< direct paths, once per call: no rank reads another's buffers after it
  // Along the rails (tier 1): rank (d, j) with rank (d', j) for every other domain d'.
  RailReduce,  ///< pieces go to the domain that reduces them, which reduces in domain order
  RailCopy,    ///< pieces go to the domains that need them
  // Across domains, every rank with every rank of the other domains (tier 1).
  CrossExchange,  ///< all-to-all: each block straight from its source to its destination
  // On this rank alone.
  LocalReduce,  ///< one-shot: the domains' results, reduced in domain order
  // Flat patterns over the transport (a step per round where the rounds differ).
  RingReduceScatter,
  RingAllgather,
  Fold,            ///< butterflies: ranks beyond the largest power of two fold into a partner
  HalvingReduce,   ///< halving at distance `param`: keep half, reduce the peer's half into it
  DoublingGather,  ///< doubling at distance `param`: swap the halves kept at that distance
  DoublingReduce,  ///< recursive doubling at distance `param` on the whole vector
  Unfold,          ///< butterflies: the result back to the folded ranks
  KnomialBroadcast,
  KnomialReduce,
  BruckAllgather,  ///< Bruck's step `param`
  BruckRotate,     ///< once per call: this rank's block into place (allgather), or position j
                   ///< gets the block for rank me + j (all-to-all)
  BruckAlltoall,   ///< Bruck's step `param`
  BruckPlace,      ///< all-to-all, once per call: the block from each rank to its index
  Pairwise,
  Dissemination,
  // Point to point.
  Send,
  Recv
};
inline constexpr int kNumStepKinds = 28;
static_assert(kNumStepKinds == static_cast<int>(StepKind::Recv) + 1, "the tables of step kinds are sized by this");
/// "stage", "domain-reduce", ... (static storage).
const char* toString(StepKind k);

/// How a hierarchical collective's data divides among the ranks that hold it.
enum class Pieces : std::uint8_t {
  None,
  Vector,  ///< one vector (allreduce, reduce, broadcast): rail j owns slice j of each fragment,
           ///< and along the rail domain d owns sub-slice d of that slice
  Whole,   ///< the whole fragment goes to every peer (one-shot)
  Blocks,  ///< a block per rank (reduce-scatter, allgather): rail j holds the blocks of the
           ///< local ranks l with l % rails == j
  Routes,  ///< a block per (source, destination) (all-to-all): rail j carries the blocks for
           ///< local ranks l with l % rails == j
  DomainRoutes,  ///< the blocks between the ranks of one domain (the linear all-to-all, whose other
                 ///< blocks go straight across): staged by the destination's local rank
};

/// Where a step reads or writes.
enum class Buffer : std::uint8_t {
  None,
  Send,        ///< the caller's send buffer
  Recv,        ///< the caller's receive buffer
  Window,      ///< this rank's staging window (peers read it)
  Accumulate,  ///< this rank's accumulate scratch
  Receive,     ///< this rank's receive scratch (arrivals)
  PeerSend,    ///< domain peers' send buffers (direct paths)
  PeerRecv,    ///< domain peers' receive buffers (direct paths)
};
const char* toString(Buffer b);

/// Who sends to whom in a step, so that tiercc-sim's exact mode can expand it rank by rank
/// with the pattern math. The runtime and the cost model do not read it.
enum class Exchange : std::uint8_t {
  Unknown,    ///< not described: the simulator prices the step as a whole
  InDomain,   ///< every rank with every other rank of its domain
  Rail,       ///< every rank with the rank of the same local rank in every other domain
  Ring,       ///< rank i to i + 1 (mod p)
  Butterfly,  ///< rank realRank(v) to realRank(v XOR param), pattern::Butterfly's numbering
  Fold,       ///< the folding ranks of pattern::Butterfly to their partner (param 0) or back (1)
  Shift,      ///< rank i to i + param (mod p)
  All,        ///< every rank with every other rank
  Across,     ///< every rank with every rank of the other domains
};

/// Which ranks of a domain run a step. Inside a domain every step is on the one tier, and the
/// cost model takes a pipelined plan's period from its busiest rank: a step that only the root
/// runs (a broadcast's staging) overlaps the steps that only the others run (their copies of the
/// fragments it staged before).
enum class Runner : std::uint8_t {
  Every,   ///< every rank (of the domain, or of the ranks the step names)
  Root,    ///< the root alone
  Others,  ///< every rank but the root
};

struct Step {
  StepKind kind = StepKind::Stage;
  Tier tier = Tier::ScaleUp;  ///< the tier that paces the step (its slowest link)
  Group group = Group::Domain;
  Pieces pieces = Pieces::None;
  Buffer in = Buffer::None;   ///< where the step reads its peers' (or its own) data
  Buffer out = Buffer::None;  ///< where it writes
  bool finalizes = false;     ///< writes final values: the reduction's last step (Avg divides here)
  bool perCall = false;       ///< once per call (Agree, Close), not once per fragment
  /// Bit i: steps of the same fragment this one waits for. Steps run in list order; a step
  /// posted on the transport (a rail step) completes only when a later step depends on it or
  /// the fragment ends, so the executor may meanwhile run other fragments' steps.
  std::uint64_t after = 0;
  int param = 0;  ///< the pattern round: a butterfly mask, a Bruck step; a k-nomial radix
  Runner runner = Runner::Every;  ///< rooted collectives: whose time the step takes

  // What the cost model prices: the collective's whole run of this step, on its busiest rank.
  std::string what;             ///< "reduce-scatter in each domain"
  double latencySteps = 0;      ///< synchronisations or message rounds on the critical path
  double busiestBytes = 0;      ///< bytes the most loaded link carries, one direction
  double localBytes = 0;        ///< bytes the busiest rank copies within its own memory
  double crossMemoryReads = 0;  ///< system calls the busiest rank makes to read peers (CrossMemory)
  /// The step's messages travel over the transport (flat algorithms), not through the
  /// domain's windows. Inside a domain that is slower in tiercc's runtime than the windows.
  bool overTransport = false;
  Path path = Path::Staged;  ///< domain steps: how they reach peers' data

  // What it moves, summed over every rank: Communicator::stats() measures the same.
  std::uint64_t scaleUpBytes = 0;   ///< between ranks of a domain (read from a peer, or sent to one)
  std::uint64_t scaleOutBytes = 0;  ///< sent across domains

  Exchange exchange = Exchange::Unknown;  ///< who sends to whom (tiercc-sim's exact mode)
  int exchangeParam = 0;                  ///< the Butterfly mask, Fold direction or Shift distance
  double messageBytes = 0;                ///< bytes of each message of `exchange`, one sender to one receiver
};

}  // namespace tiercc
