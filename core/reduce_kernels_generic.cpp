// Baseline kernels (x86-64: SSE2): what every CPU of the architecture runs.
// The kernels themselves are core/reduce_kernels_impl.hpp; core/reduce_isa.cpp picks the table.
#include "core/reduce_kernels_impl.hpp"

namespace tiercc::kernels {

const ReduceKernels& genericKernels() {
  static constexpr ReduceKernels kTable = makeKernels("generic");
  return kTable;
}

}  // namespace tiercc::kernels
