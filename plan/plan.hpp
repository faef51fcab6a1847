// A plan is the schedule of one collective as data: which algorithm, and the steps it takes,
// each on one tier with its latency terms and its bytes. The same plan is priced by the cost
// model (to choose), accounted against the slow-tier bound (to report), and priced on a
// modelled cluster by tiercc-sim (to size one), so the three can never disagree.
//
// Steps describe the whole collective, not one rank: `busiestBytes` is what the most loaded
// link of the step carries (it paces the step), and the totals per tier are summed over every
// rank (they are what Communicator::stats() measures, and tests compare the two exactly).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tiercc/types.hpp"

namespace tiercc {

enum class Collective : std::uint8_t {
  AllReduce,
  ReduceScatter,
  AllGather,
  Broadcast,
  Reduce,
  AllToAll,
  AllToAllv,
  Barrier
};
inline constexpr int kNumCollectives = 8;
/// "allreduce", "reduce_scatter", ... (the names TIERCC_ALGO and tiercc-perf use).
const char* toString(Collective c);
/// Parses a name from toString; false if unknown.
bool parseCollective(const std::string& name, Collective& out);

enum class Tier : std::uint8_t { ScaleUp, ScaleOut };

/// The shape the planner needs: which domain each rank is in. Built from a Topology, or from
/// a cluster description (tiercc-sim) without creating any rank.
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

class Topology;
/// The shape of a communicator's topology.
Shape shapeOf(const Topology& topo);

/// What is asked: the collective, its size, and what the algorithm must know about it.
struct Request {
  Collective coll = Collective::AllReduce;
  std::size_t count = 0;  ///< elements: of the vector (allreduce, broadcast, reduce),
                          ///< per rank (allgather, reduce_scatter), per peer (alltoall)
  DataType dt = DataType::F32;
  int root = 0;                        ///< broadcast, reduce
  int radix = 2;                       ///< k-nomial trees
  std::size_t windowBytes = 4u << 20;  ///< the scale-up staging window (round size)
  std::size_t totalBytes = 0;          ///< alltoallv: bytes this collective moves in all, every rank
};

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
};

/// One step of a plan.
struct Step {
  std::string what;           ///< "reduce-scatter in the domain (direct)"
  Tier tier = Tier::ScaleUp;  ///< the tier that paces the step (its slowest link)
  /// The step's messages travel over the transport (flat algorithms, rails), not through the
  /// domain's windows. Inside a domain that is slower in tiercc's runtime than the windows.
  bool overTransport = true;
  double latencySteps = 0;                ///< message or synchronisation rounds on the critical path
  double busiestBytes = 0;                ///< bytes the most loaded link carries, one direction
  std::uint64_t scaleUpBytes = 0;         ///< moved inside domains, summed over ranks
  std::uint64_t scaleOutBytes = 0;        ///< sent across domains, summed over ranks
  Exchange exchange = Exchange::Unknown;  ///< who sends to whom (tiercc-sim's exact mode)
  int exchangeParam = 0;                  ///< the Butterfly mask, Fold direction or Shift distance
  double messageBytes = 0;                ///< bytes of each message of `exchange`, one sender to one receiver
};

struct Plan {
  Collective coll = Collective::AllReduce;
  std::string algorithm;  ///< "hierarchical", "ring", ...
  std::size_t bytes = 0;  ///< the collective's size in nccl-tests' sense
  std::vector<Step> steps;
  std::uint64_t boundBytes = 0;  ///< the slow-tier lower bound for this shape, summed over ranks
  /// > 1: the steps run in this many rounds, two in flight, so that one round's scale-up steps
  /// overlap another's scale-out steps (the hierarchical allreduce across domains). 0: the
  /// steps run one after the other.
  double pipelinedRounds = 0;

  std::uint64_t scaleUpBytes() const;
  std::uint64_t scaleOutBytes() const;
  /// One line per step, for TIERCC_DEBUG_SUBSYS=TUNE and tiercc-sim.
  std::string describe() const;
  /// The plan's time from its steps' times: their sum, or for a pipelined plan the busier
  /// tier's steps plus one round of the other tier's (the pipeline filling and draining).
  double combine(const std::vector<double>& stepSeconds) const;
};

/// Lower bound on the bytes a collective must send across domains, summed over all ranks:
/// allreduce 2(D-1)/D S per domain; reduce-scatter and allgather (D-1)/D S per domain (S the
/// whole output); broadcast S into each non-root domain; reduce S out of each non-root
/// domain; all-to-all the cross-domain share of the data.
std::uint64_t slowTierBound(const Request& req, const Shape& shape);

/// The algorithms that exist for a collective, in the order the selector lists them.
const std::vector<std::string>& algorithmsFor(Collective c);
/// Why `algorithm` cannot run `req` on `shape` ("" if it can).
std::string unsupportedReason(const std::string& algorithm, const Request& req, const Shape& shape);
/// The plan of `algorithm` for `req` on `shape`. The algorithm must be supported.
Plan buildPlan(const std::string& algorithm, const Request& req, const Shape& shape);

}  // namespace tiercc
