// The table of reduction kernels one ISA provides (generic, avx2, avx512), one entry per
// DataType x op. core/reduce_isa.cpp picks one table per process; core/reduce.cpp calls through it.
#pragma once

#include <cstddef>

#include "tiercc/types.hpp"

namespace tiercc::kernels {

/// dst[i] = op(a[i], b[i]); dst may be exactly a and/or b, never a partial overlap.
using ReduceFn = void (*)(void* dst, const void* a, const void* b, std::size_t count);
/// dst[i] /= n (n > 0), for finishing an Avg.
using DivideFn = void (*)(void* dst, std::size_t count, int n);

/// Ops with their own kernels: Sum, Prod, Min, Max (the ReduceOp values 0..3); Avg uses Sum.
inline constexpr int kNumKernelOps = 4;

struct ReduceKernels {
  const char* isa;  ///< "generic", "avx2", "avx512"
  ReduceFn reduce[kNumDataTypes][kNumKernelOps];
  DivideFn divide[kNumDataTypes];
};

/// Baseline code for the target architecture (x86-64: SSE2), always available.
const ReduceKernels& genericKernels();
#if defined(__x86_64__)
/// AVX2 + F16C (core/reduce_kernels_avx2.cpp); call only where the CPU has them.
const ReduceKernels& avx2Kernels();
/// AVX-512 F/BW/DQ/VL + F16C (core/reduce_kernels_avx512.cpp); call only where the CPU has them.
const ReduceKernels& avx512Kernels();
#endif

}  // namespace tiercc::kernels
