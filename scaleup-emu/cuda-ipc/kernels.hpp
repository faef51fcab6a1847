// Device kernels of the cuda-ipc backend (kernels.cu): copy and element-wise reduction between
// device pointers, any of which may be a peer's window mapped through CUDA IPC. Launches are
// asynchronous on `stream`; launch errors are thrown as tiercc::Error.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "tiercc/types.hpp"

namespace tiercc::cuda {

/// Most sources one reduce launch takes (they travel by value in the kernel's parameters).
inline constexpr int kMaxReduceSources = 16;

/// True for the types the device reduces: f32, f64, f16, bf16 (both accumulated in f32), i32, i64.
bool deviceReduceSupports(DataType dt);

/// dst[0, bytes) = src[0, bytes); 16-byte vector loads when both pointers allow.
void copy(void* dst, const void* src, std::size_t bytes, cudaStream_t stream);

/// dst[i] = op(srcs[0][i], ..., srcs[n-1][i]) for i < count, combined in source order. Avg sums
/// and divides by n (integers truncate toward zero), like the host's reduceInto + finishAvg.
/// dst may be one of the sources (each element is read before it is written).
void reduce(void* dst, const void* const* srcs, int n, std::size_t count, DataType dt, ReduceOp op,
            cudaStream_t stream);

}  // namespace tiercc::cuda
