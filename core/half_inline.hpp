// Branch-free scalar IEEE half / bfloat16 <-> binary32 conversions (round to nearest even, NaN
// stays NaN), inline so that each reduction kernel file (core/reduce_kernels_*.cpp) compiles and
// vectorises them for its own ISA, and core/half.cpp exposes them as the scalar API.
#pragma once

#include <bit>
#include <cstdint>

namespace tiercc::half_bits {
// Internal linkage on purpose: this header is compiled under different -m flags per ISA, and the
// linker must never merge an AVX-512 copy of an inline function into the baseline code (ODR).
namespace {  // NOLINT(google-build-namespaces, cert-dcl59-cpp)

constexpr std::uint32_t kF32SignMask = 0x80000000u;
constexpr std::uint32_t kF32AbsMask = 0x7fffffffu;
constexpr std::uint32_t kF32Inf = 0x7f800000u;
constexpr std::uint32_t kF32QuietBit = 0x00400000u;
// Exponent rebias from half (15) to float (127), in place in the float's exponent field.
constexpr std::uint32_t kHalfToF32Rebias = (127u - 15u) << 23;
constexpr std::uint32_t kHalfExpMaskShifted = 0x7c00u << 13;
// 2^-14 as float bits: below this a half is subnormal.
constexpr std::uint32_t kHalfMinNormalAsF32 = 113u << 23;
// 2^16 as float bits: at or above this the half is Inf (or NaN); [65520, 65536) rounds to Inf
// through the normal path on its own.
constexpr std::uint32_t kHalfOverflowAsF32 = (127u + 16u) << 23;
// Adding 0.5 (biased exponent 126) puts a subnormal half's 10 mantissa bits at the bottom of
// the float's mantissa, rounded by the FPU in its (default) round-to-nearest-even mode.
constexpr std::uint32_t kDenormMagic = ((127u - 15u) + (23u - 10u) + 1u) << 23;

// cond ? x : y as a mask blend. With a plain ?: g++ sinks the float arithmetic feeding one arm
// into a branch (it may not speculate it under -ftrapping-math), and the loop stops vectorising.
inline std::uint32_t select(bool cond, std::uint32_t x, std::uint32_t y) {
  const std::uint32_t mask = 0u - static_cast<std::uint32_t>(cond);
  return (x & mask) | (y & ~mask);
}

inline float halfToFloatInline(std::uint16_t h) {
  std::uint32_t bits = (static_cast<std::uint32_t>(h) & 0x7fffu) << 13;
  const std::uint32_t exp = bits & kHalfExpMaskShifted;
  bits += kHalfToF32Rebias;
  // Inf/NaN: push the exponent the rest of the way to 255 (mantissa, hence NaN-ness, is kept).
  const std::uint32_t infNan = bits + ((128u - 16u) << 23);
  // Zero/subnormal: the bits read as 2^-14 * (1 + m/1024); subtracting 2^-14 leaves m * 2^-24
  // exactly, which also normalises it.
  const float sub = std::bit_cast<float>(bits + (1u << 23)) - std::bit_cast<float>(kHalfMinNormalAsF32);
  const std::uint32_t out =
      select(exp == kHalfExpMaskShifted, infNan, select(exp == 0, std::bit_cast<std::uint32_t>(sub), bits));
  return std::bit_cast<float>(out | (static_cast<std::uint32_t>(h) & 0x8000u) << 16);
}

inline std::uint16_t floatToHalfInline(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t sign = (x & kF32SignMask) >> 16;
  const std::uint32_t a = x & kF32AbsMask;
  // NaN keeps the top payload bits and is forced quiet (so it can never turn into Inf).
  const std::uint32_t nanOrInf = a > kF32Inf ? (0x7e00u | ((a >> 13) & 0x3ffu)) : 0x7c00u;
  const std::uint32_t sub =
      std::bit_cast<std::uint32_t>(std::bit_cast<float>(a) + std::bit_cast<float>(kDenormMagic)) - kDenormMagic;
  // Normal: rebias, then round to nearest even by adding 0x0fff plus the lowest kept bit before
  // truncating 13 bits; a carry out of the mantissa correctly bumps the exponent (up to Inf).
  const std::uint32_t normal = (a + ((15u - 127u) << 23) + 0x0fffu + ((a >> 13) & 1u)) >> 13;
  const std::uint32_t out = select(a >= kHalfOverflowAsF32, nanOrInf, select(a < kHalfMinNormalAsF32, sub, normal));
  return static_cast<std::uint16_t>(out | sign);
}

inline float bf16ToFloatInline(std::uint16_t b) { return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16); }

inline std::uint16_t floatToBf16Inline(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  // Round to nearest even on the 16 dropped bits; a carry into the exponent is correct (to Inf).
  const std::uint32_t rounded = x + 0x7fffu + ((x >> 16) & 1u);
  // NaN: truncate and set the quiet bit, so a payload in the low bits cannot round to Inf.
  const std::uint32_t nan = x | kF32QuietBit;
  // One narrowing shift after the select: SSE2 has no cheap 32->16 pack, so do it only once.
  return static_cast<std::uint16_t>(select((x & kF32AbsMask) > kF32Inf, nan, rounded) >> 16);
}

}  // namespace
}  // namespace tiercc::half_bits
