// Which reduction kernels this process runs (generic, avx2, avx512): chosen once, at first use,
// from what the CPU has and TIERCC_REDUCE_ISA; every ISA gives bit-identical results.
#pragma once

#include <string>
#include <vector>

#include "core/reduce_kernels.hpp"

namespace tiercc {

/// The kernel table in use; the first call picks it (thread-safe) and logs the choice at INFO.
/// Throws InvalidArgument if TIERCC_REDUCE_ISA names an ISA unknown here or missing on this CPU.
const kernels::ReduceKernels& activeReduceKernels();

/// The name of the ISA in use: "generic", "avx2" or "avx512".
const char* reduceIsaName();

/// Every ISA name TIERCC_REDUCE_ISA accepts besides "auto", best first.
std::vector<std::string> reduceIsaNames();

/// True when this build and this CPU can run the named ISA's kernels.
bool reduceIsaSupported(const std::string& isa);

/// Tests and benchmarks: switch to the named ISA ("auto" for the best one). Throws
/// InvalidArgument, as TIERCC_REDUCE_ISA does, for an ISA this CPU cannot run. Not for use while
/// another thread reduces: a kernel call already running keeps the table it started with.
void setReduceIsaForTesting(const std::string& isa);

}  // namespace tiercc
