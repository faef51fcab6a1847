// tiercc-info: CUDA devices, for the CUDA IPC scale-up backend.
#include "tools/info/probes.hpp"

#ifdef TIERCC_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace tiercc::info {

#ifdef TIERCC_HAVE_CUDA
void printCudaDevices(std::ostream& out) {
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    out << "  CUDA: no usable device (" << cudaGetErrorString(err) << ")\n";
    return;
  }
  for (int d = 0; d < n; ++d) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, d) == cudaSuccess)
      out << "  CUDA device " << d << ": " << prop.name << ", " << (prop.totalGlobalMem >> 20) << " MiB\n";
  }
}
#else
void printCudaDevices(std::ostream& out) {
  out << "  CUDA: not built (configure found no CUDA toolkit)\n";
}
#endif

}  // namespace tiercc::info
