// AVX-512 (F/BW/DQ/VL) + F16C kernels, compiled with -mavx512{f,bw,dq,vl} -mf16c and 512-bit
// vectors preferred (core/CMakeLists.txt).
// The kernels themselves are core/reduce_kernels_impl.hpp; core/reduce_isa.cpp picks the table.
#include "core/reduce_kernels_impl.hpp"

namespace tiercc::kernels {

const ReduceKernels& avx512Kernels() {
  static constexpr ReduceKernels kTable = makeKernels("avx512");
  return kTable;
}

}  // namespace tiercc::kernels
