// Checking CUDA runtime calls: every failure becomes tiercc::Error{SystemError} naming the call
// and CUDA's own words for the error, so that no cudaError_t is ever dropped on the floor.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "core/errors.hpp"

namespace tiercc::cuda {

/// Throws Error{SystemError} "<call>: <cudaErrorName> (<description>)" unless err is cudaSuccess.
inline void check(cudaError_t err, const std::string& call) {
  if (err != cudaSuccess)
    fail(ErrorCode::SystemError, call, ": ", cudaGetErrorName(err), " (", cudaGetErrorString(err), ")");
}

}  // namespace tiercc::cuda

/// Runs a CUDA runtime call and throws tiercc::Error with its text on failure.
#define TIERCC_CUDA_CHECK(call) ::tiercc::cuda::check((call), #call)
