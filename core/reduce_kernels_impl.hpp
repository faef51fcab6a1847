// The reduction kernels as templates: plain __restrict loops that the compiler vectorises for
// whatever ISA the including file is compiled for. Each core/reduce_kernels_<isa>.cpp includes
// this under its own target flags (core/CMakeLists.txt) and builds its table with makeKernels.
//
// Every element is one IEEE operation (or a compare-and-select), never fused or reassociated,
// so each ISA gives bit-identical results; tests/reduce_test.cpp checks that against generic.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "core/half_inline.hpp"
#include "core/reduce_kernels.hpp"
#include "tiercc/types.hpp"

#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace tiercc::kernels {
// Internal linkage on purpose, as in core/half_inline.hpp: the same template compiled for
// AVX-512 here and for baseline x86-64 there must never be merged by the linker (ODR).
namespace {  // NOLINT(google-build-namespaces, cert-dcl59-cpp)

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
// +0 and -0 compare equal here and the right operand is returned. A compare and a select, so
// every ISA returns the same bits.
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

template <typename In, typename Out, Out (*convert)(In)>
void convertLoop(const In* __restrict in, Out* __restrict out, std::size_t n) {
  std::size_t i = 0;
  for (; n - i >= kChunk; i += kChunk) {
    for (std::size_t j = 0; j < kChunk; ++j) out[i + j] = convert(in[i + j]);
  }
  for (; i < n; ++i) out[i] = convert(in[i]);
}

// f16 uses the hardware conversions where the ISA has them (F16C, AVX-512F): exact, and equal
// to the scalar bit tricks for every input (checked exhaustively). The one difference, that
// F16C quiets a signalling NaN while widening, never shows: every path back to f16 quiets NaN.
#if defined(__F16C__)
// The rounding is in the instruction's immediate, so MXCSR's rounding mode does not matter.
constexpr int kRoundNearestEven = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
#endif
#if defined(__AVX512F__)
// The zero-masked forms with every lane on: the unmasked intrinsics trip g++ 12's
// -Wmaybe-uninitialized inside <avx512fintrin.h> (_mm512_undefined_ps).
constexpr __mmask16 kAll16 = 0xffff;
#endif

struct HalfCodec {
  static void toFloat(const std::uint16_t* __restrict in, float* __restrict out, std::size_t n) {
    std::size_t i = 0;
#if defined(__AVX512F__) && defined(__F16C__)
    for (; n - i >= 16; i += 16) {
      const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i));
      _mm512_storeu_ps(out + i, _mm512_maskz_cvtph_ps(kAll16, h));
    }
#elif defined(__AVX__) && defined(__F16C__)
    for (; n - i >= 8; i += 8) {
      const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
      _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
    }
#endif
    convertLoop<std::uint16_t, float, half_bits::halfToFloatInline>(in + i, out + i, n - i);
  }
  static void fromFloat(const float* __restrict in, std::uint16_t* __restrict out, std::size_t n) {
    std::size_t i = 0;
#if defined(__AVX512F__) && defined(__F16C__)
    for (; n - i >= 16; i += 16) {
      const __m256i h = _mm512_maskz_cvtps_ph(kAll16, _mm512_loadu_ps(in + i), kRoundNearestEven);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), h);
    }
#elif defined(__AVX__) && defined(__F16C__)
    for (; n - i >= 8; i += 8) {
      const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(in + i), kRoundNearestEven);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), h);
    }
#endif
    convertLoop<float, std::uint16_t, half_bits::floatToHalfInline>(in + i, out + i, n - i);
  }
};

// bf16 stays in integer bit manipulation on every ISA: it vectorises well, and AVX512_BF16's
// VCVTNEPS2BF16 flushes subnormals, which would make its results differ from the other paths.
// (Reductions use Bf16Op below, which fuses the same conversions into the loop; finishAvg uses this.)
struct Bf16Codec {
  static void toFloat(const std::uint16_t* __restrict in, float* __restrict out, std::size_t n) {
    convertLoop<std::uint16_t, float, half_bits::bf16ToFloatInline>(in, out, n);
  }
  static void fromFloat(const float* __restrict in, std::uint16_t* __restrict out, std::size_t n) {
    convertLoop<float, std::uint16_t, half_bits::floatToBf16Inline>(in, out, n);
  }
};

// bf16 element by element: widen both operands, apply the f32 op, round back, all in one loop
// (the conversions are a shift and a few integer ops, cheaper than a round trip through f32
// stack buffers: about 20-40% faster with AVX-512, the same with AVX2).
template <typename Op>
struct Bf16Op {
  static std::uint16_t apply(std::uint16_t a, std::uint16_t b) {
    return half_bits::floatToBf16Inline(Op::apply(half_bits::bf16ToFloatInline(a), half_bits::bf16ToFloatInline(b)));
  }
};

// f16: widen a block of each input (F16C where there is one), reduce in f32, round once back.
// Both inputs are read before the block of dst is written, so dst == a or dst == b is safe.
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

// The kernels of one element type: native arithmetic, or through f32 for the 16-bit floats
// (bf16 fused element by element, f16 in blocks so that F16C converts whole vectors).
template <typename T>
struct Native {
  template <typename Op>
  static constexpr ReduceFn reduce = &reduceNative<T, Op>;
  static constexpr DivideFn divide = &divideNative<T>;
};

struct Bf16Fused {
  template <typename Op>
  static constexpr ReduceFn reduce = &reduceNative<std::uint16_t, Bf16Op<Op>>;
  static constexpr DivideFn divide = &divideViaF32<Bf16Codec>;
};

template <typename Codec>
struct ViaF32 {
  template <typename Op>
  static constexpr ReduceFn reduce = &reduceViaF32<Codec, Op>;
  static constexpr DivideFn divide = &divideViaF32<Codec>;
};

template <typename Kind>
constexpr void setRow(ReduceKernels& k, DataType dt) {
  const auto t = static_cast<int>(dt);
  k.reduce[t][static_cast<int>(ReduceOp::Sum)] = Kind::template reduce<SumOp>;
  k.reduce[t][static_cast<int>(ReduceOp::Prod)] = Kind::template reduce<ProdOp>;
  k.reduce[t][static_cast<int>(ReduceOp::Min)] = Kind::template reduce<MinOp>;
  k.reduce[t][static_cast<int>(ReduceOp::Max)] = Kind::template reduce<MaxOp>;
  k.divide[t] = Kind::divide;
}

constexpr ReduceKernels makeKernels(const char* isa) {
  ReduceKernels k{};
  k.isa = isa;
  setRow<Native<float>>(k, DataType::F32);
  setRow<Native<double>>(k, DataType::F64);
  setRow<ViaF32<HalfCodec>>(k, DataType::F16);
  setRow<Bf16Fused>(k, DataType::BF16);
  setRow<Native<std::int8_t>>(k, DataType::I8);
  setRow<Native<std::uint8_t>>(k, DataType::U8);
  setRow<Native<std::int32_t>>(k, DataType::I32);
  setRow<Native<std::uint32_t>>(k, DataType::U32);
  setRow<Native<std::int64_t>>(k, DataType::I64);
  setRow<Native<std::uint64_t>>(k, DataType::U64);
  return k;
}

static_assert(static_cast<int>(ReduceOp::Sum) < kNumKernelOps && static_cast<int>(ReduceOp::Prod) < kNumKernelOps &&
                  static_cast<int>(ReduceOp::Min) < kNumKernelOps && static_cast<int>(ReduceOp::Max) < kNumKernelOps,
              "ReduceKernels::reduce is indexed by ReduceOp");

}  // namespace
}  // namespace tiercc::kernels
