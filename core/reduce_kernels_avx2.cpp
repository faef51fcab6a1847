// AVX2 + F16C kernels, compiled with -mavx2 -mf16c (core/CMakeLists.txt).
// The kernels themselves are core/reduce_kernels_impl.hpp; core/reduce_isa.cpp picks the table.
#include "core/reduce_kernels_impl.hpp"

namespace tiercc::kernels {

const ReduceKernels& avx2Kernels() {
  static constexpr ReduceKernels kTable = makeKernels("avx2");
  return kTable;
}

}  // namespace tiercc::kernels
