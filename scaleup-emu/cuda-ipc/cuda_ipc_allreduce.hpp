// A small intra-domain allreduce on device buffers through the cuda-ipc windows, one-shot:
// every rank stages its input into its own window, raises Staged, reduces all windows straight
// into its output, raises Released, and waits until every peer has released before returning.
// Entry point for tests and, later, for the Executor's device path (not wired into the
// Communicator yet: docs/design.md).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "tiercc/deadline.hpp"
#include "tiercc/types.hpp"

namespace tiercc {

class CudaIpcDomain;

/// Flags the allreduce uses (of Domain::kNumFlags).
inline constexpr int kCudaIpcStagedFlag = 0;
inline constexpr int kCudaIpcReleasedFlag = 1;

/// Collective over the domain: recvbuf = op over every rank's sendbuf (count elements of dt,
/// device pointers on domain.device(); they may be equal). `seq` numbers the call, the same on
/// every rank and one more than the previous call's (first call: 1). Work goes on `stream`,
/// which is synchronised before returning. Each rank combines the windows in rank order, so
/// every rank gets bitwise the same result. Needs count * size(dt) <= windowBytes(); errors:
/// InvalidArgument, NotSupported (types without a device kernel), Timeout and PeerFailure
/// naming the peer (`what` starts each message), SystemError for CUDA failures.
void cudaIpcAllreduce(CudaIpcDomain& domain, const void* sendbuf, void* recvbuf, std::size_t count, DataType dt,
                      ReduceOp op, std::uint32_t seq, Deadline deadline, const std::string& what,
                      cudaStream_t stream = nullptr);

/// Empty when the cuda-ipc backend can run `ranks` ranks on this host, else why not (no
/// driver, no device, IPC unsupported, exclusive-process devices fewer than ranks, ...). The
/// probe runs in a forked child, so the calling process does not initialise CUDA and may still
/// fork ranks that use it (CUDA does not survive fork). Cached after the first call.
std::string cudaIpcUnavailableReason(int ranks = 2);

}  // namespace tiercc
