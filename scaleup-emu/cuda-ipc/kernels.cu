// Copy and element-wise reduction kernels (see kernels.hpp). One grid-stride template per
// (type, op); f16 and bf16 accumulate in f32 and round once at the end, integers wrap like the
// host's reductions instead of overflowing (signed overflow is undefined, unsigned wraps).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "scaleup-emu/cuda-ipc/cuda_check.hpp"
#include "scaleup-emu/cuda-ipc/kernels.hpp"

namespace tiercc::cuda {
namespace {

constexpr int kThreads = 256;
constexpr std::size_t kMaxBlocks = 4096;  // grid-stride beyond this: enough to fill an H200

unsigned blocksFor(std::size_t items) {
  return static_cast<unsigned>(std::min(kMaxBlocks, (items + kThreads - 1) / kThreads));
}

// What each element is loaded as, combined in, and stored back from.
template <typename T>
struct Acc {
  using type = T;
  __device__ static type load(T v) { return v; }
  __device__ static T store(type a) { return a; }
};
// f16 and bf16 NaN go through bit operations rather than the conversion intrinsics, whose NaN
// results are the hardware's (possibly a canonical NaN): the host (core/half_inline.hpp) keeps
// the sign and payload and sets the quiet bit, and so do these, so a NaN reaching the output
// has the same bits on both sides.
__device__ inline bool isNanBits(float a) { return (__float_as_uint(a) & 0x7fffffffu) > 0x7f800000u; }

template <>
struct Acc<__half> {
  using type = float;
  __device__ static float load(__half v) {
    const unsigned h = __half_as_ushort(v);
    if ((h & 0x7c00u) == 0x7c00u && (h & 0x03ffu) != 0)  // NaN: widen the payload, as the host does
      return __uint_as_float(((h & 0x8000u) << 16) | 0x7f800000u | ((h & 0x03ffu) << 13));
    return __half2float(v);
  }
  __device__ static __half store(float a) {
    if (isNanBits(a)) {  // host floatToHalfInline: sign | quiet | top 10 payload bits
      const unsigned x = __float_as_uint(a);
      return __ushort_as_half(static_cast<unsigned short>(((x >> 16) & 0x8000u) | 0x7e00u | ((x >> 13) & 0x03ffu)));
    }
    return __float2half_rn(a);
  }
};
template <>
struct Acc<__nv_bfloat16> {
  using type = float;
  __device__ static float load(__nv_bfloat16 v) {
    return __uint_as_float(static_cast<unsigned>(__bfloat16_as_ushort(v)) << 16);
  }
  __device__ static __nv_bfloat16 store(float a) {
    if (isNanBits(a))  // host floatToBf16Inline: set the quiet bit, truncate
      return __ushort_as_bfloat16(static_cast<unsigned short>((__float_as_uint(a) | 0x00400000u) >> 16));
    return __float2bfloat16_rn(a);
  }
};

template <typename A>
__device__ A wrapAdd(A a, A b) {
  if constexpr (std::is_integral_v<A>) {
    using U = std::make_unsigned_t<A>;
    return static_cast<A>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}
template <typename A>
__device__ A wrapMul(A a, A b) {
  if constexpr (std::is_integral_v<A>) {
    using U = std::make_unsigned_t<A>;
    return static_cast<A>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return a * b;
  }
}

struct SumOp {
  template <typename A>
  __device__ static A apply(A a, A b) {
    return wrapAdd(a, b);
  }
};
struct ProdOp {
  template <typename A>
  __device__ static A apply(A a, A b) {
    return wrapMul(a, b);
  }
};
// Min/Max are the host's (core/reduce_kernels_impl.hpp) expressions exactly, so both give the
// same bits: a NaN operand wins (the left one, i.e. the lowest rank's, when both are), and equal
// operands, +0 and -0 included, return the right one. A compare and a select never touch a NaN's
// bits, so f32/f64 NaN reach the output unchanged, as on the host; f16/bf16 NaN are then quieted
// by Acc::store as on the host. (Sum, Prod and Avg are arithmetic: there the GPU returns its
// canonical NaN, while x86 propagates the operand's payload.)
struct MinOp {
  template <typename A>
  __device__ static A apply(A a, A b) {
    if constexpr (std::is_floating_point_v<A>) {
      return (a < b || a != a) ? a : b;
    } else {
      return a < b ? a : b;
    }
  }
};
struct MaxOp {
  template <typename A>
  __device__ static A apply(A a, A b) {
    if constexpr (std::is_floating_point_v<A>) {
      return (a > b || a != a) ? a : b;
    } else {
      return a > b ? a : b;
    }
  }
};

struct Sources {
  const void* p[kMaxReduceSources];
};

template <typename T, typename Op>
__global__ void reduceKernel(T* dst, Sources srcs, int n, std::size_t count, int avgDivisor) {
  using A = typename Acc<T>::type;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    A acc = Acc<T>::load(static_cast<const T*>(srcs.p[0])[i]);
    for (int s = 1; s < n; ++s) acc = Op::apply(acc, Acc<T>::load(static_cast<const T*>(srcs.p[s])[i]));
    if (avgDivisor > 1) acc = acc / static_cast<A>(avgDivisor);
    dst[i] = Acc<T>::store(acc);
  }
}

// The first vectorBytes (a multiple of 16, both pointers 16-aligned) move as uint4, the rest
// byte by byte.
__global__ void copyKernel(std::byte* dst, const std::byte* src, std::size_t vectorBytes, std::size_t bytes) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  auto* d4 = reinterpret_cast<uint4*>(dst);
  const auto* s4 = reinterpret_cast<const uint4*>(src);
  for (std::size_t i = first; i < vectorBytes / 16; i += stride) d4[i] = s4[i];
  for (std::size_t i = vectorBytes + first; i < bytes; i += stride) dst[i] = src[i];
}

template <typename T, typename Op>
void launchReduce(void* dst, const Sources& srcs, int n, std::size_t count, int avgDivisor, cudaStream_t stream) {
  reduceKernel<T, Op><<<blocksFor(count), kThreads, 0, stream>>>(static_cast<T*>(dst), srcs, n, count, avgDivisor);
  check(cudaGetLastError(), "launching the cuda-ipc reduce kernel");
}

template <typename T>
void launchReduceOp(void* dst, const Sources& srcs, int n, std::size_t count, ReduceOp op, cudaStream_t stream) {
  switch (op) {
    case ReduceOp::Sum:
      return launchReduce<T, SumOp>(dst, srcs, n, count, 1, stream);
    case ReduceOp::Avg:
      return launchReduce<T, SumOp>(dst, srcs, n, count, n, stream);
    case ReduceOp::Prod:
      return launchReduce<T, ProdOp>(dst, srcs, n, count, 1, stream);
    case ReduceOp::Min:
      return launchReduce<T, MinOp>(dst, srcs, n, count, 1, stream);
    case ReduceOp::Max:
      return launchReduce<T, MaxOp>(dst, srcs, n, count, 1, stream);
  }
  fail(ErrorCode::InvalidArgument, "cuda-ipc reduce: unknown reduction operator ", static_cast<int>(op));
}

}  // namespace

bool deviceReduceSupports(DataType dt) {
  switch (dt) {
    case DataType::F32:
    case DataType::F64:
    case DataType::F16:
    case DataType::BF16:
    case DataType::I32:
    case DataType::I64:
      return true;
    default:
      return false;
  }
}

void copy(void* dst, const void* src, std::size_t bytes, cudaStream_t stream) {
  if (bytes == 0) return;
  TIERCC_REQUIRE_ARG(dst != nullptr && src != nullptr, "cuda-ipc copy: null device pointer");
  const bool aligned = (reinterpret_cast<std::uintptr_t>(dst) | reinterpret_cast<std::uintptr_t>(src)) % 16 == 0;
  const std::size_t vectorBytes = aligned ? bytes / 16 * 16 : 0;
  const std::size_t items = std::max(vectorBytes / 16, bytes - vectorBytes);
  copyKernel<<<blocksFor(items), kThreads, 0, stream>>>(static_cast<std::byte*>(dst),
                                                        static_cast<const std::byte*>(src), vectorBytes, bytes);
  check(cudaGetLastError(), "launching the cuda-ipc copy kernel");
}

void reduce(void* dst, const void* const* srcs, int n, std::size_t count, DataType dt, ReduceOp op,
            cudaStream_t stream) {
  TIERCC_REQUIRE_ARG(n >= 1 && n <= kMaxReduceSources, "cuda-ipc reduce: ", n, " sources, supported 1..",
                     kMaxReduceSources);
  if (count == 0) return;
  TIERCC_REQUIRE_ARG(dst != nullptr, "cuda-ipc reduce: null destination");
  Sources s{};
  for (int i = 0; i < n; ++i) {
    TIERCC_REQUIRE_ARG(srcs[i] != nullptr, "cuda-ipc reduce: source ", i, " is null");
    s.p[i] = srcs[i];
  }
  switch (dt) {
    case DataType::F32:
      return launchReduceOp<float>(dst, s, n, count, op, stream);
    case DataType::F64:
      return launchReduceOp<double>(dst, s, n, count, op, stream);
    case DataType::F16:
      return launchReduceOp<__half>(dst, s, n, count, op, stream);
    case DataType::BF16:
      return launchReduceOp<__nv_bfloat16>(dst, s, n, count, op, stream);
    case DataType::I32:
      return launchReduceOp<std::int32_t>(dst, s, n, count, op, stream);
    case DataType::I64:
      return launchReduceOp<std::int64_t>(dst, s, n, count, op, stream);
    default:
      fail(ErrorCode::NotSupported, "cuda-ipc reduce: no device kernel for ", toString(dt),
           " (supported: f32, f64, f16, bf16, i32, i64)");
  }
}

}  // namespace tiercc::cuda
