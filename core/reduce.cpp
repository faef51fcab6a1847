// Element-wise reduction kernels (reduceInto, reduce3, finishAvg) for every DataType x ReduceOp.
// Each (type, op) pair is a template instance with plain __restrict loops that g++ vectorises;
// f16/bf16 go through f32 in small blocks, so the arithmetic is the f32 loop as well.
#include "core/reduce.hpp"

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "core/errors.hpp"

namespace tiercc {

// Defined in core/half.cpp next to the scalar conversions they share code with.
namespace detail {
void halfToFloatBlock(const std::uint16_t* __restrict in, float* __restrict out, std::size_t n);
void floatToHalfBlock(const float* __restrict in, std::uint16_t* __restrict out, std::size_t n);
void bf16ToFloatBlock(const std::uint16_t* __restrict in, float* __restrict out, std::size_t n);
void floatToBf16Block(const float* __restrict in, std::uint16_t* __restrict out, std::size_t n);
}  // namespace detail

namespace {

// f16/bf16 elements per pass through the f32 stack buffers: 2 x 1 KiB, small enough to stay in
// L1 and large enough that the per-block calls cost nothing.
constexpr std::size_t kBlock = 256;
// Elements per fixed-length inner loop (see loop3); a multiple of every vector width up to
// 512 bits for every element size.
constexpr std::size_t kChunk = 64;

// Integer Sum/Prod wrap modulo 2^bits, as in NCCL and MPI. The arithmetic is done in an unsigned
// type at least as wide as unsigned int, so neither signed overflow nor the promotion of small
// types to (signed) int can be undefined behaviour.
template <typename T>
using WrapType = std::common_type_t<std::make_unsigned_t<T>, unsigned>;

struct SumOp {
  template <typename T>
  static T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(static_cast<WrapType<T>>(a) + static_cast<WrapType<T>>(b));
    } else {
      return a + b;
    }
  }
};

struct ProdOp {
  template <typename T>
  static T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(static_cast<WrapType<T>>(a) * static_cast<WrapType<T>>(b));
    } else {
      return a * b;
    }
  }
};

// Min/Max propagate NaN: if either operand is NaN the result is NaN (the left one if both are),
// as IEEE 754-2019 minimum/maximum do. fmin/fmax would drop the NaN, and std::min's answer
// depends on the operand order, hence on the reduction order across ranks. Unlike IEEE minimum,
// +0 and -0 compare equal here and the right operand is returned.
struct MinOp {
  template <typename T>
  static T apply(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
      return (a < b || a != a) ? a : b;
    } else {
      return a < b ? a : b;
    }
  }
};

struct MaxOp {
  template <typename T>
  static T apply(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
      return (a > b || a != a) ? a : b;
    } else {
      return a > b ? a : b;
    }
  }
};

// One loop per aliasing pattern, so each can promise __restrict honestly: the contract allows
// dst to be exactly a and/or b, never a partial overlap.
//
// The loops run over fixed kChunk-element chunks plus a scalar remainder because g++ 12 at -O2
// (our RelWithDebInfo) uses the "very cheap" vectoriser cost model, which only vectorises loops
// whose trip count is a known multiple of the vector width; -O3 would vectorise either form.
template <typename T, typename Op>
void loop3(T* __restrict dst, const T* __restrict a, const T* __restrict b, std::size_t n) {
  std::size_t i = 0;
  for (; n - i >= kChunk; i += kChunk) {
    for (std::size_t j = 0; j < kChunk; ++j) dst[i + j] = Op::apply(a[i + j], b[i + j]);
  }
  for (; i < n; ++i) dst[i] = Op::apply(a[i], b[i]);
}

template <typename T, typename Op>
void loopIntoLeft(T* __restrict io, const T* __restrict b, std::size_t n) {
  std::size_t i = 0;
  for (; n - i >= kChunk; i += kChunk) {
    for (std::size_t j = 0; j < kChunk; ++j) io[i + j] = Op::apply(io[i + j], b[i + j]);
  }
  for (; i < n; ++i) io[i] = Op::apply(io[i], b[i]);
}

template <typename T, typename Op>
void loopIntoRight(const T* __restrict a, T* __restrict io, std::size_t n) {
  std::size_t i = 0;
  for (; n - i >= kChunk; i += kChunk) {
    for (std::size_t j = 0; j < kChunk; ++j) io[i + j] = Op::apply(a[i + j], io[i + j]);
  }
  for (; i < n; ++i) io[i] = Op::apply(a[i], io[i]);
}

template <typename T, typename Op>
void loopSelf(T* __restrict io, std::size_t n) {
  std::size_t i = 0;
  for (; n - i >= kChunk; i += kChunk) {
    for (std::size_t j = 0; j < kChunk; ++j) io[i + j] = Op::apply(io[i + j], io[i + j]);
  }
  for (; i < n; ++i) io[i] = Op::apply(io[i], io[i]);
}

template <typename T, typename Op>
void reduceNative(void* dst, const void* a, const void* b, std::size_t n) {
  T* d = static_cast<T*>(dst);
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  if (d == x && d == y) {
    loopSelf<T, Op>(d, n);
  } else if (d == x) {
    loopIntoLeft<T, Op>(d, y, n);
  } else if (d == y) {
    loopIntoRight<T, Op>(x, d, n);
  } else {
    loop3<T, Op>(d, x, y, n);
  }
}

struct HalfCodec {
  static void toFloat(const std::uint16_t* in, float* out, std::size_t n) {
    detail::halfToFloatBlock(in, out, n);
  }
  static void fromFloat(const float* in, std::uint16_t* out, std::size_t n) {
    detail::floatToHalfBlock(in, out, n);
  }
};

struct Bf16Codec {
  static void toFloat(const std::uint16_t* in, float* out, std::size_t n) {
    detail::bf16ToFloatBlock(in, out, n);
  }
  static void fromFloat(const float* in, std::uint16_t* out, std::size_t n) {
    detail::floatToBf16Block(in, out, n);
  }
};

// 16-bit floats: widen a block of each input, reduce in f32, round once back. Both inputs are
// read before the block of dst is written, so dst == a or dst == b is safe.
template <typename Codec, typename Op>
void reduceViaF32(void* dst, const void* a, const void* b, std::size_t n) {
  auto* d = static_cast<std::uint16_t*>(dst);
  const auto* x = static_cast<const std::uint16_t*>(a);
  const auto* y = static_cast<const std::uint16_t*>(b);
  alignas(64) float fx[kBlock];
  alignas(64) float fy[kBlock];
  for (std::size_t off = 0; off < n; off += kBlock) {
    const std::size_t len = n - off < kBlock ? n - off : kBlock;
    Codec::toFloat(x + off, fx, len);
    Codec::toFloat(y + off, fy, len);
    loopIntoLeft<float, Op>(fx, fy, len);
    Codec::fromFloat(fx, d + off, len);
  }
}

template <typename Op>
void reduceTyped(void* dst, const void* a, const void* b, std::size_t n, DataType dt) {
  switch (dt) {
    case DataType::F32:
      return reduceNative<float, Op>(dst, a, b, n);
    case DataType::F64:
      return reduceNative<double, Op>(dst, a, b, n);
    case DataType::F16:
      return reduceViaF32<HalfCodec, Op>(dst, a, b, n);
    case DataType::BF16:
      return reduceViaF32<Bf16Codec, Op>(dst, a, b, n);
    case DataType::I8:
      return reduceNative<std::int8_t, Op>(dst, a, b, n);
    case DataType::U8:
      return reduceNative<std::uint8_t, Op>(dst, a, b, n);
    case DataType::I32:
      return reduceNative<std::int32_t, Op>(dst, a, b, n);
    case DataType::U32:
      return reduceNative<std::uint32_t, Op>(dst, a, b, n);
    case DataType::I64:
      return reduceNative<std::int64_t, Op>(dst, a, b, n);
    case DataType::U64:
      return reduceNative<std::uint64_t, Op>(dst, a, b, n);
  }
  fail(ErrorCode::InvalidArgument, "unknown datatype ", static_cast<int>(dt), " (valid: 0..",
       kNumDataTypes - 1, ")");
}

void dispatch(void* dst, const void* a, const void* b, std::size_t n, DataType dt, ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Avg:
      return reduceTyped<SumOp>(dst, a, b, n, dt);
    case ReduceOp::Prod:
      return reduceTyped<ProdOp>(dst, a, b, n, dt);
    case ReduceOp::Min:
      return reduceTyped<MinOp>(dst, a, b, n, dt);
    case ReduceOp::Max:
      return reduceTyped<MaxOp>(dst, a, b, n, dt);
  }
  fail(ErrorCode::InvalidArgument, "unknown reduction op ", static_cast<int>(op), " (valid: 0..",
       kNumReduceOps - 1, ")");
}

// Floats divide rather than multiply by 1/n: x / n rounds once, x * (1/n) rounds twice and can be
// an ulp off (e.g. n = 3), which a user comparing against sum / n would see.
template <typename T>
void divideNative(void* dst, std::size_t count, int n) {
  T* d = static_cast<T*>(dst);
  if constexpr (std::is_floating_point_v<T>) {
    const T div = static_cast<T>(n);
    for (std::size_t i = 0; i < count; ++i) d[i] /= div;
  } else {
    // Divide in 64 bits of T's signedness: i64/u64 keep all their bits, and an n beyond T's
    // range (200 for i8) gives 0 rather than a wrapped divisor. n > 0 was checked.
    using Wide = std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>;
    const Wide div = static_cast<Wide>(n);
    for (std::size_t i = 0; i < count; ++i) d[i] = static_cast<T>(static_cast<Wide>(d[i]) / div);
  }
}

template <typename Codec>
void divideViaF32(void* dst, std::size_t count, int n) {
  auto* d = static_cast<std::uint16_t*>(dst);
  const float div = static_cast<float>(n);
  alignas(64) float fx[kBlock];
  for (std::size_t off = 0; off < count; off += kBlock) {
    const std::size_t len = count - off < kBlock ? count - off : kBlock;
    Codec::toFloat(d + off, fx, len);
    for (std::size_t i = 0; i < len; ++i) fx[i] /= div;  // not hot: once per allreduce
    Codec::fromFloat(fx, d + off, len);
  }
}

}  // namespace

void reduceInto(void* dst, const void* src, std::size_t count, DataType dt, ReduceOp op) {
  dispatch(dst, dst, src, count, dt, op);
}

void reduce3(void* dst, const void* a, const void* b, std::size_t count, DataType dt, ReduceOp op) {
  dispatch(dst, a, b, count, dt, op);
}

void finishAvg(void* dst, std::size_t count, DataType dt, int n) {
  TIERCC_REQUIRE_ARG(n > 0, "finishAvg: divisor must be positive, got ", n);
  switch (dt) {
    case DataType::F32:
      return divideNative<float>(dst, count, n);
    case DataType::F64:
      return divideNative<double>(dst, count, n);
    case DataType::F16:
      return divideViaF32<HalfCodec>(dst, count, n);
    case DataType::BF16:
      return divideViaF32<Bf16Codec>(dst, count, n);
    case DataType::I8:
      return divideNative<std::int8_t>(dst, count, n);
    case DataType::U8:
      return divideNative<std::uint8_t>(dst, count, n);
    case DataType::I32:
      return divideNative<std::int32_t>(dst, count, n);
    case DataType::U32:
      return divideNative<std::uint32_t>(dst, count, n);
    case DataType::I64:
      return divideNative<std::int64_t>(dst, count, n);
    case DataType::U64:
      return divideNative<std::uint64_t>(dst, count, n);
  }
  fail(ErrorCode::InvalidArgument, "unknown datatype ", static_cast<int>(dt), " (valid: 0..",
       kNumDataTypes - 1, ")");
}

}  // namespace tiercc
