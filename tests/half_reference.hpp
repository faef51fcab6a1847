// Reference f16/bf16 conversions for the tests: decode by formula, encode by binary search
// for the nearest representable magnitude (ties to the even one). Slow and obviously correct.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace tiercc::test {

// Magnitude of the 16-bit pattern k (sign clear) with mantissaBits and exponent bias; the
// all-ones exponent decodes as if finite (2^emax+1), which is where rounding overflows to Inf.
inline double decodeMagnitude(std::uint32_t k, int mantissaBits, int bias) {
  const std::uint32_t e = k >> mantissaBits;
  const std::uint32_t m = k & ((1u << mantissaBits) - 1);
  if (e == 0) return std::ldexp(static_cast<double>(m), 1 - bias - mantissaBits);
  return std::ldexp(static_cast<double>((1u << mantissaBits) + m), static_cast<int>(e) - bias - mantissaBits);
}

inline std::uint16_t encodeNearest(float f, int mantissaBits, int bias, std::uint32_t infBits) {
  const std::uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  if (std::isnan(f)) return static_cast<std::uint16_t>(sign | infBits | (1u << (mantissaBits - 1)));
  const double x = std::fabs(static_cast<double>(f));
  // Largest k in [0, infBits] with decode(k) <= x.
  std::uint32_t lo = 0;
  std::uint32_t hi = infBits + 1;
  while (hi - lo > 1) {
    const std::uint32_t mid = (lo + hi) / 2;
    if (decodeMagnitude(mid, mantissaBits, bias) <= x)
      lo = mid;
    else
      hi = mid;
  }
  std::uint32_t k = lo;
  if (k < infBits) {
    const double below = x - decodeMagnitude(k, mantissaBits, bias);
    const double above = decodeMagnitude(k + 1, mantissaBits, bias) - x;
    if (above < below || (above == below && (k & 1))) ++k;
  }
  return static_cast<std::uint16_t>(sign | k);
}

inline float refHalfToFloat(std::uint16_t h) {
  const std::uint32_t k = h & 0x7fffu;
  float mag;
  if (k > 0x7c00u) {
    mag = std::numeric_limits<float>::quiet_NaN();
  } else if (k == 0x7c00u) {
    mag = std::numeric_limits<float>::infinity();
  } else {
    mag = static_cast<float>(decodeMagnitude(k, 10, 15));
  }
  return (h & 0x8000u) ? -mag : mag;
}

inline std::uint16_t refFloatToHalf(float f) { return encodeNearest(f, 10, 15, 0x7c00u); }
inline float refBf16ToFloat(std::uint16_t b) { return std::bit_cast<float>(std::uint32_t{b} << 16); }
inline std::uint16_t refFloatToBf16(float f) { return encodeNearest(f, 7, 127, 0x7f80u); }

inline bool isHalfNan(std::uint16_t h) { return (h & 0x7fffu) > 0x7c00u; }
inline bool isBf16Nan(std::uint16_t b) { return (b & 0x7fffu) > 0x7f80u; }

}  // namespace tiercc::test
