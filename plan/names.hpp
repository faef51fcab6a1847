// The names plans are made of: collectives, algorithms, tiers, groups and the paths a domain
// step can take to its peers' data. Each is a small enum with the text TIERCC_ALGO, tiercc-info
// and the statistics use.
#pragma once

#include <cstdint>
#include <string>

namespace tiercc {

enum class Collective : std::uint8_t {
  AllReduce,
  ReduceScatter,
  AllGather,
  Broadcast,
  Reduce,
  AllToAll,
  AllToAllv,
  Barrier,
  Send,
  Recv
};
inline constexpr int kNumCollectives = 10;
/// "allreduce", "reduce_scatter", ... (the names TIERCC_ALGO and tiercc-perf use).
const char* toString(Collective c);
/// Parses a name from toString; false if unknown.
bool parseCollective(const std::string& name, Collective& out);

/// An algorithm's typed identity; the registry (registry.hpp) says which collectives have it.
enum class Algorithm : std::uint8_t {
  Hierarchical,
  OneShot,
  Ring,
  HalvingDoubling,
  RecursiveDoubling,
  Knomial,
  Bruck,
  Pairwise,
  Dissemination,
  PointToPoint,
  Linear
};
inline constexpr int kNumAlgorithms = 11;
/// "hierarchical", "one_shot", ... (static storage).
const char* toString(Algorithm a);
bool parseAlgorithm(const std::string& name, Algorithm& out);

enum class Tier : std::uint8_t { ScaleUp, ScaleOut };
const char* toString(Tier t);

/// The ranks a step runs among.
enum class Group : std::uint8_t {
  Self,    ///< this rank alone (a local reduction)
  Domain,  ///< the ranks of this rank's domain, through its windows or buffers
  Rail,    ///< the ranks of this rank's local rank in every domain
  World,   ///< every rank, over the transport
  Pair     ///< this rank and one peer (send/recv)
};
const char* toString(Group g);

/// How the ranks of a domain reach each other's data.
enum class Path : std::uint8_t {
  Staged,       ///< through the windows: each rank copies its input in, peers copy out
  ZeroCopy,     ///< straight from peers' buffers mapped here (symmetric memory)
  CrossMemory,  ///< straight from peers' buffers through the kernel (one copy, process_vm_readv)
};
inline constexpr int kNumPaths = 3;
/// "staged", "zero_copy", "cma" (static storage; TierStats::scaleUpPath).
const char* toString(Path p);

}  // namespace tiercc
