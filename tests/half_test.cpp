// Tests for the f16/bf16 conversions in core/reduce.hpp against the reference in
// half_reference.hpp: every bit pattern, every rounding midpoint, random floats, known values.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>

#include "core/reduce.hpp"
#include "tests/half_reference.hpp"

namespace tiercc {
namespace {

using namespace tiercc::test;

bool sameFloat(float a, float b) {
  return std::isnan(a) ? std::isnan(b) : std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b);
}

TEST(HalfConversion, AllBitPatternsDecodeAndRoundTrip) {
  for (std::uint32_t i = 0; i < 0x10000u; ++i) {
    const auto h = static_cast<std::uint16_t>(i);
    const float f = halfToFloat(h);
    ASSERT_TRUE(sameFloat(f, refHalfToFloat(h))) << std::hex << "0x" << i << " -> " << f;
    const std::uint16_t back = floatToHalf(f);
    if (isHalfNan(h)) {
      ASSERT_TRUE(isHalfNan(back)) << std::hex << "0x" << i << " -> 0x" << back;
      if (h & 0x0200u) {  // quiet NaNs survive intact
        ASSERT_EQ(back, h) << "quiet NaN payload lost";
      }
    } else {
      ASSERT_EQ(back, h) << std::hex << "0x" << i;
    }
  }
}

TEST(Bf16Conversion, AllBitPatternsDecodeAndRoundTrip) {
  for (std::uint32_t i = 0; i < 0x10000u; ++i) {
    const auto b = static_cast<std::uint16_t>(i);
    const float f = bf16ToFloat(b);
    ASSERT_EQ(std::bit_cast<std::uint32_t>(f), i << 16);
    const std::uint16_t back = floatToBf16(f);
    if (isBf16Nan(b)) {
      ASSERT_TRUE(isBf16Nan(back)) << std::hex << "0x" << i << " -> 0x" << back;
      if (b & 0x0040u) {
        ASSERT_EQ(back, b) << "quiet NaN payload lost";
      }
    } else {
      ASSERT_EQ(back, b) << std::hex << "0x" << i;
    }
  }
}

// Rounding is decided around the midpoints between neighbouring 16-bit values: check each
// midpoint and the floats just either side of it, for every finite magnitude.
TEST(HalfConversion, RoundsToNearestEvenAtEveryMidpoint) {
  for (std::uint32_t k = 0; k < 0x7c00u; ++k) {
    const double mid = (decodeMagnitude(k, 10, 15) + decodeMagnitude(k + 1, 10, 15)) / 2;
    const auto m = static_cast<float>(mid);
    ASSERT_EQ(static_cast<double>(m), mid) << "midpoint not exact in f32";
    for (float f : {m, std::nextafter(m, 0.0f), std::nextafter(m, 1e30f)}) {
      for (float s : {f, -f}) ASSERT_EQ(floatToHalf(s), refFloatToHalf(s)) << std::hexfloat << s;
    }
  }
}

TEST(Bf16Conversion, RoundsToNearestEvenAtEveryMidpoint) {
  for (std::uint32_t k = 0; k < 0x7f80u; ++k) {
    const float m = std::bit_cast<float>((k << 16) | 0x8000u);
    for (float f : {m, std::nextafter(m, 0.0f), std::nextafter(m, std::numeric_limits<float>::infinity())}) {
      for (float s : {f, -f}) ASSERT_EQ(floatToBf16(s), refFloatToBf16(s)) << std::hexfloat << s;
    }
  }
}

TEST(Conversions, RandomFloatBitPatternsMatchReference) {
  std::mt19937 rng(42);
  for (int i = 0; i < 200000; ++i) {
    const float f = std::bit_cast<float>(static_cast<std::uint32_t>(rng()));
    const std::uint16_t h = floatToHalf(f);
    const std::uint16_t b = floatToBf16(f);
    if (std::isnan(f)) {
      ASSERT_TRUE(isHalfNan(h)) << std::hexfloat << f;
      ASSERT_TRUE(isBf16Nan(b)) << std::hexfloat << f;
    } else {
      ASSERT_EQ(h, refFloatToHalf(f)) << std::hexfloat << f;
      ASSERT_EQ(b, refFloatToBf16(f)) << std::hexfloat << f;
    }
  }
}

TEST(HalfConversion, KnownValues) {
  EXPECT_EQ(halfToFloat(0x3c00), 1.0f);
  EXPECT_EQ(halfToFloat(0xc000), -2.0f);
  EXPECT_EQ(halfToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(halfToFloat(0x0001), std::ldexp(1.0f, -24));                      // smallest subnormal
  EXPECT_EQ(halfToFloat(0x03ff), std::ldexp(1023.0f, -24));                   // largest subnormal
  EXPECT_EQ(halfToFloat(0x0400), std::ldexp(1.0f, -14));                      // smallest normal
  EXPECT_EQ(std::bit_cast<std::uint32_t>(halfToFloat(0x8000)), 0x80000000u);  // -0 keeps its sign
  EXPECT_EQ(halfToFloat(0x7c00), std::numeric_limits<float>::infinity());
  EXPECT_EQ(halfToFloat(0xfc00), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(halfToFloat(0x7e00)));
  EXPECT_TRUE(std::isnan(halfToFloat(0x7c01)));  // signalling NaN is not Inf

  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(65519.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00);  // the tie above max rounds to even, i.e. Inf
  EXPECT_EQ(floatToHalf(1e9f), 0x7c00);
  EXPECT_EQ(floatToHalf(-std::numeric_limits<float>::infinity()), 0xfc00);
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -25)), 0x0000);  // tie between 0 and 2^-24: even is 0
  EXPECT_EQ(floatToHalf(std::ldexp(3.0f, -25)), 0x0002);  // tie between 1 and 2 ulps: even is 2
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -26)), 0x0000);
  EXPECT_EQ(floatToHalf(-std::ldexp(1.0f, -30)), 0x8000);        // underflow keeps the sign
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3c00);  // tie: even mantissa 0
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(3.0f, -11)), 0x3c02);  // tie: even mantissa 2
  EXPECT_EQ(floatToHalf(std::ldexp(2047.0f, -25)), 0x0400);      // largest subnormal + half ulp -> normal
  EXPECT_TRUE(isHalfNan(floatToHalf(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(isHalfNan(floatToHalf(std::bit_cast<float>(0x7f800001u))));  // low-payload NaN
  EXPECT_TRUE(isHalfNan(floatToHalf(std::numeric_limits<float>::signaling_NaN())));
}

TEST(Bf16Conversion, KnownValues) {
  EXPECT_EQ(bf16ToFloat(0x3f80), 1.0f);
  EXPECT_EQ(bf16ToFloat(0xc000), -2.0f);
  EXPECT_EQ(floatToBf16(1.0f), 0x3f80);
  EXPECT_EQ(floatToBf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);  // tie: even
  EXPECT_EQ(floatToBf16(1.0f + std::ldexp(3.0f, -8)), 0x3f82);  // tie: even
  EXPECT_EQ(floatToBf16(1.0f + std::ldexp(1.0f, -9)), 0x3f80);
  EXPECT_EQ(floatToBf16(std::numeric_limits<float>::max()), 0x7f80);  // rounds up to Inf
  EXPECT_EQ(floatToBf16(std::bit_cast<float>(0x7f7f7fffu)), 0x7f7f);  // just below the overflow tie
  EXPECT_EQ(floatToBf16(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(floatToBf16(std::bit_cast<float>(0x00018000u)), 0x0002);  // subnormal tie: even
  EXPECT_EQ(floatToBf16(-std::numeric_limits<float>::infinity()), 0xff80);
  // NaNs whose payload lives only in the dropped bits must not become Inf.
  EXPECT_TRUE(isBf16Nan(floatToBf16(std::bit_cast<float>(0x7f800001u))));
  EXPECT_TRUE(isBf16Nan(floatToBf16(std::bit_cast<float>(0xffffffffu))));
  EXPECT_TRUE(isBf16Nan(floatToBf16(std::numeric_limits<float>::signaling_NaN())));
  EXPECT_EQ(floatToBf16(std::numeric_limits<float>::quiet_NaN()) & 0x0040, 0x0040);  // quiet
}

}  // namespace
}  // namespace tiercc
