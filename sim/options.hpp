// tiercc-sim's command line: the cluster (a preset and overrides, every figure with its unit)
// and what to price. Parsed here, not in the tool, so that tests can check it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plan/plan.hpp"
#include "sim/cluster.hpp"

namespace tiercc::sim {

struct Options {
  Cluster cluster;
  Collective coll = Collective::AllReduce;
  std::uint64_t bytes = 1ull << 30;  ///< nccl-tests' size: the vector (allreduce), the whole buffer (allgather, ...)
  std::string algo = "auto";
  bool exact = false;
  bool compare = false;
  bool steps = false;
  bool listPresets = false;
  std::uint64_t sweepMin = 0, sweepMax = 0;  ///< --sweep MIN:MAX (0: no sweep)
  double sweepFactor = 2;
  std::string json;  ///< --json FILE (sweep output; "" = stdout)
  int group = 0;     ///< --placement: the group's size
  std::vector<int> split;  ///< --placement: ranks of the group in each domain
  bool placement = false;
  std::size_t windowBytes = 0;     ///< --window (0: auto, resolved per shape by windowFor)
  std::size_t windowMaxBytes = 0;  ///< --window-max (0: TIERCC_SHM_CHUNK_MAX's)
  int radix = 2;
  int root = 0;
};

/// Usage text.
const char* usage();
/// Parses argv; InvalidArgument naming the option for anything wrong. `help` is set for -h.
Options parseOptions(int argc, const char* const* argv, bool& help);
/// The window each rank of `shape` stages in: --window, or with auto the cost model's on
/// o.cluster (plan/window_size.hpp) up to --window-max.
std::size_t windowFor(const Options& o, const Shape& shape);
/// `o` with --window auto resolved for `shape`, so that pricing many sizes chooses it once.
Options withWindowFor(Options o, const Shape& shape);
/// The request for `bytes` of o.coll on `shape` (f32 elements, nccl-tests' size convention).
Request requestFor(const Options& o, std::uint64_t bytes, const Shape& shape);

}  // namespace tiercc::sim
