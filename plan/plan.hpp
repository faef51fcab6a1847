// A plan is the schedule of one collective as data: its steps, how its data is cut into
// fragments, how many fragments are in flight, and the slow-tier bound of the work. The
// executor (exec/) runs it; the cost model prices it (to choose); the statistics count what
// its steps moved against the bound (to report); tiercc-sim prices it on a modelled cluster
// (to size one). The four read the same object, so they cannot disagree.
//
// Steps describe the whole collective, not one rank: `busiestBytes` is what the most loaded link
// carries over the whole call, and the byte totals are summed over every rank.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "plan/names.hpp"
#include "plan/step.hpp"
#include "tiercc/types.hpp"

namespace tiercc {

class Topology;

/// The shape the planner needs: which domain each rank is in. From a Topology, or from a
/// cluster description (tiercc-sim) without creating any rank.
struct Shape {
  std::vector<int> domainOf;     ///< per rank
  std::vector<int> domainSizes;  ///< per domain
  int size() const { return static_cast<int>(domainOf.size()); }
  int numDomains() const { return static_cast<int>(domainSizes.size()); }
  int minDomainSize() const;
  int maxDomainSize() const;
  bool uniform() const { return minDomainSize() == maxDomainSize(); }
  /// D domains of k ranks, ranks numbered domain by domain.
  static Shape uniformDomains(int numDomains, int domainSize);
};
Shape shapeOf(const Topology& topo);

/// The staging window of each rank unless the cost model asks for a larger one (TIERCC_SHM_CHUNK).
inline constexpr std::size_t kDefaultWindowBytes = std::size_t{4} << 20;

/// What is asked: the collective, its size, and what the algorithm must know about it.
struct Request {
  Collective coll = Collective::AllReduce;
  std::size_t count = 0;  ///< elements: of the vector (allreduce, broadcast, reduce, send, recv),
                          ///< per rank (allgather, reduce_scatter), per peer (alltoall)
  DataType dt = DataType::F32;
  int root = 0;                        ///< broadcast, reduce
  int peer = 0;                        ///< send, recv
  int radix = 2;                       ///< k-nomial trees
  /// The scale-up staging window (the scratch is sized from it), or for a pipelined plan the part
  /// of it its fragments are cut from (plan/pipeline_depth.hpp).
  std::size_t windowBytes = kDefaultWindowBytes;
  std::size_t railMessageBytes = 0;    ///< the transport's preferred largest rail message (0: any)
  /// Fragments in flight (Plan::slots), 1 to kMaxSlots; 0: inside one domain 1, across domains
  /// buildPlan takes 2, the selector the depth the cost model prices fastest (pipeline_depth.hpp).
  std::uint32_t slots = 0;
  std::size_t totalBytes = 0;          ///< alltoallv: bytes the collective moves in all, every rank
  /// alltoallv, optional: bytes from rank i to rank j at [i * size + j]. With it the plan's byte
  /// counts are exact; without, they are priced from totalBytes spread evenly.
  const std::vector<std::uint64_t>* alltoallvBytes = nullptr;
};

/// The most fragments a plan keeps in flight: each has its 1/slots of the window and scratch.
inline constexpr std::uint32_t kMaxSlots = 8;

/// The scratch every communicator keeps, sized from its window (so plans know what fits).
inline std::size_t accumulateBytes(std::size_t windowBytes) { return windowBytes; }
/// Room for the hierarchical allreduce's fragments in flight (up to kMaxSlots), each with D
/// sub-slices that may round up by one element of up to 8 bytes.
inline std::size_t receiveBytes(std::size_t windowBytes, int numDomains) {
  return windowBytes + kMaxSlots * 8 * static_cast<std::size_t>(numDomains);
}

/// Cross-memory reductions read each peer's part through the kernel in chunks of at most this
/// much into the accumulate scratch, then reduce from there (cache-sized, few system calls).
inline constexpr std::size_t kCrossMemoryChunkBytes = 1 << 20;

/// How the ranks of a domain take turns in its windows.
enum class Rounds : std::uint8_t {
  None,         ///< no domain steps (flat algorithms, send/recv)
  PerFragment,  ///< each fragment is a round: begun when peers released the round that used its slot
  Direct,       ///< Agree takes one epoch per fragment and Close ends the call
  InStep,       ///< the plan's one domain step runs its round itself (one-shot)
};

/// Direct paths: the buffers every rank of the domain must have in symmetric memory (ZeroCopy).
enum DirectNeeds : std::uint32_t {
  kNeedSend = 1,         ///< every rank's send buffer
  kNeedRecv = 2,         ///< every rank's receive buffer
  kNeedRootSend = 4,     ///< the root's send buffer
  kNeedRootRecv = 8,     ///< the root's receive buffer
  kNeedOutOfPlace = 16,  ///< and no rank in place (either path)
};

struct Plan {
  Collective coll = Collective::AllReduce;
  Algorithm algorithm = Algorithm::Hierarchical;
  Path path = Path::Staged;
  std::size_t bytes = 0;          ///< the collective's size in nccl-tests' sense
  std::uint64_t boundBytes = 0;   ///< the slow-tier lower bound for this shape, summed over ranks
  int root = -1;                  ///< broadcast, reduce; the peer of send, recv
  std::size_t count = 0;          ///< elements of each block (Request::count)
  std::size_t elementBytes = 0;   ///< of Request::dt
  std::size_t fragmentCount = 0;  ///< elements of each block per fragment
  std::uint32_t fragments = 0;    ///< ceil(count / fragmentCount)
  std::uint32_t slots = 1;        ///< fragments in flight, each in its 1/slots of window and scratch
  /// The part of the window its fragments were cut from (Request::windowBytes): a pipelined plan
  /// may cut them from less than the whole, each still in its 1/slots of the domain's window.
  std::size_t windowBytes = 0;
  Rounds rounds = Rounds::None;
  std::uint32_t directNeeds = 0;  ///< DirectNeeds, for a ZeroCopy or CrossMemory plan
  double predictedSeconds = 0;    ///< the selector's price of it (0: not priced)
  /// A deque: the Step& that addStep() returns stays valid while later steps are added (a
  /// vector's would dangle once it grows; ASan found a builder reading one).
  std::deque<Step> steps;
  /// [first, end) of the steps run once per fragment; the others (Step::perCall) run once
  /// before (those below first) or after.
  std::pair<std::size_t, std::size_t> fragmentSteps{0, 0};
  /// Why a fragment of one element per block does not fit the window or scratch ("" if it
  /// does): the plan is priced, but neither chosen nor run.
  std::string unfit;

  std::uint64_t scaleUpBytes() const { return sum(&Step::scaleUpBytes); }
  std::uint64_t scaleOutBytes() const { return sum(&Step::scaleOutBytes); }
  std::uint64_t sum(std::uint64_t Step::*field) const;  ///< over the steps
  /// The plan's time from its steps' times: their sum, or for a pipelined plan (slots > 1, see
  /// plan.cpp) its fragments in a pipeline of `slots` places. `inFlightSeconds` is the part of
  /// each step's time its posted transfers spend in flight (scale-out latency), which other
  /// fragments' steps may hide; missing entries are 0.
  double combine(const std::vector<double>& stepSeconds, const std::vector<double>& inFlightSeconds = {}) const;
};

/// Lower bound on the bytes a collective must send across domains, summed over all ranks:
/// allreduce 2(D-1)/D S per domain; reduce-scatter and allgather (D-1)/D S per domain (S the
/// whole output); broadcast S into each non-root domain; reduce S out of each non-root domain;
/// all-to-all the cross-domain share of the data; all-to-allv what crosses by its counts (0
/// without them); send and recv what crosses, once. The one function every layer reports with.
std::uint64_t slowTierBound(const Request& req, const Shape& shape);

}  // namespace tiercc
