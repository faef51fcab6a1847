// tiercc-perf's command line, following nccl-tests: -b/-e/-f sizes, -o op, -d type, -r root,
// -n iterations, -w warm-up, -c check; plus --coll, --algo, --json and --symmetric.
#pragma once

#include <cstddef>
#include <string>

#include "tiercc/types.hpp"

namespace tiercc::perf {

enum class Coll { AllReduce, ReduceScatter, AllGather, Broadcast, Reduce, AllToAll, SendRecv };

struct Options {
  Coll coll = Coll::AllReduce;
  std::size_t minBytes = 8, maxBytes = 64u << 20;
  double stepFactor = 2;
  DataType dt = DataType::F32;
  ReduceOp op = ReduceOp::Sum;
  int root = 0;
  int iters = 20, warmup = 5;
  bool check = true;
  std::string algo = "auto";
  std::string json;  ///< file to append one JSON object per size to
  bool symmetric = false;  ///< buffers from Communicator::allocShared (zero copy inside a domain)
};

/// Parses argv; InvalidArgument with a message naming the bad option. `--help` sets help.
Options parseOptions(int argc, char** argv, bool& help);
const char* usage();
const char* collName(Coll c);
/// "8", "4K", "64M", "1G" (powers of 1024); InvalidArgument otherwise.
std::size_t parseSize(const std::string& text, const std::string& what);
/// An integer option value >= min (and <= 10^9), or InvalidArgument naming the option `what`.
int parseInt(const std::string& text, const std::string& what, int min);

}  // namespace tiercc::perf
