// The one-shot device allreduce over a CudaIpcDomain (see cuda_ipc_allreduce.hpp).
#include "scaleup-emu/cuda-ipc/cuda_ipc_allreduce.hpp"

#include <array>

#include "core/errors.hpp"
#include "scaleup-emu/cuda-ipc/cuda_check.hpp"
#include "scaleup-emu/cuda-ipc/cuda_ipc_domain.hpp"
#include "scaleup-emu/cuda-ipc/kernels.hpp"

namespace tiercc {

void cudaIpcAllreduce(CudaIpcDomain& domain, const void* sendbuf, void* recvbuf, std::size_t count, DataType dt,
                      ReduceOp op, std::uint32_t seq, Deadline deadline, const std::string& what, cudaStream_t stream) {
  const int n = domain.size();
  const int me = domain.localRank();
  const std::size_t bytes = count * dataTypeSize(dt);
  TIERCC_REQUIRE_ARG(count == 0 || bytes / count == dataTypeSize(dt), what, ": count ", count, " overflows");
  TIERCC_REQUIRE_ARG(bytes <= domain.windowBytes(), what, ": ", bytes, " bytes do not fit the ", domain.windowBytes(),
                     "-byte cuda-ipc window (no chunking yet)");
  TIERCC_REQUIRE_ARG(count == 0 || (sendbuf != nullptr && recvbuf != nullptr), what, ": null device buffer");
  TIERCC_REQUIRE_ARG(n <= cuda::kMaxReduceSources, what, ": a cuda-ipc domain of ", n,
                     " ranks, the device reduce takes ", cuda::kMaxReduceSources);
  if (!cuda::deviceReduceSupports(dt))
    fail(ErrorCode::NotSupported, what, ": no cuda-ipc device reduction for ", toString(dt));
  TIERCC_CUDA_CHECK(cudaSetDevice(domain.device()));

  // Stage: our input into our window, complete before the flag says so.
  cuda::copy(domain.window(me), sendbuf, bytes, stream);
  domain.publishDeviceWrites(stream);
  domain.signal(kCudaIpcStagedFlag, seq);

  std::array<const void*, cuda::kMaxReduceSources> sources{};  // n <= kMaxReduceSources, checked above
  for (int r = 0; r < n; ++r) {
    if (r != me) domain.waitUntil(r, kCudaIpcStagedFlag, seq, deadline, what);
    sources[r] = domain.window(r);
  }
  // Reduce: every rank reads every window (rank order, so all ranks agree bit for bit).
  cuda::reduce(recvbuf, sources.data(), n, count, dt, op, stream);
  domain.publishDeviceWrites(stream);  // our reads of the peers' windows are done

  // Release: no rank restages (next call) or frees its window while a peer still reads it.
  domain.signal(kCudaIpcReleasedFlag, seq);
  for (int r = 0; r < n; ++r)
    if (r != me) domain.waitUntil(r, kCudaIpcReleasedFlag, seq, deadline, what);
}

}  // namespace tiercc
