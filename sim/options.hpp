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
  std::size_t windowBytes = 4u << 20;
  int radix = 2;
  int root = 0;
};

/// Usage text.
const char* usage();
/// Parses argv; InvalidArgument naming the option for anything wrong. `help` is set for -h.
Options parseOptions(int argc, const char* const* argv, bool& help);
/// The request for `bytes` of o.coll on `ranks` ranks (f32 elements, nccl-tests' size convention).
Request requestFor(const Options& o, std::uint64_t bytes, int ranks);

}  // namespace tiercc::sim
