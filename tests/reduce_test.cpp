// Tests for the reduction kernels in core/reduce.hpp (the conversions: half_test.cpp).
// Every result is checked against a plain scalar reference written here, independently of the
// library's tricks (magic-number rounding, chunked loops, aliasing variants). Every ISA's kernels
// against the generic ones: reduce_isa_test.cpp.
#include "core/reduce.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "tests/half_reference.hpp"
#include "tests/reduce_cases.hpp"
#include "tiercc/error.hpp"
#include "tiercc/types.hpp"

namespace tiercc {
namespace {

using namespace tiercc::test;

// ---- Element traits: random values, the reference op, and equality (NaN == NaN, since
// which NaN payload survives a+b may depend on operand order the compiler is free to swap).

template <typename T>
T refIntOp(ReduceOp op, T a, T b) {
  // Wraparound reference through 64-bit unsigned arithmetic; the conversion back is modular.
  const auto ua = static_cast<std::uint64_t>(a);
  const auto ub = static_cast<std::uint64_t>(b);
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Avg:
      return static_cast<T>(ua + ub);
    case ReduceOp::Prod:
      return static_cast<T>(ua * ub);
    case ReduceOp::Min:
      return b < a ? b : a;
    case ReduceOp::Max:
      return a < b ? b : a;
  }
  return T{};
}

// Min/Max propagate NaN (the left one if both are); on equal values (+0 vs -0) the right one wins.
template <typename F>
F refFloatOp(ReduceOp op, F a, F b) {
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Avg:
      return a + b;
    case ReduceOp::Prod:
      return a * b;
    case ReduceOp::Min:
      if (std::isnan(a)) return a;
      if (std::isnan(b)) return b;
      return a < b ? a : b;
    case ReduceOp::Max:
      if (std::isnan(a)) return a;
      if (std::isnan(b)) return b;
      return a > b ? a : b;
  }
  return F{};
}

template <typename T>
struct IntTraits {
  using Storage = T;
  static T random(std::mt19937_64& rng) { return static_cast<T>(rng()); }
  static T ref(ReduceOp op, T a, T b) { return refIntOp(op, a, b); }
  // Truncating division in 64 bits, so a divisor beyond T's range still divides correctly.
  static T refDiv(T x, int n) {
    if constexpr (std::is_signed_v<T>) {
      return static_cast<T>(static_cast<std::int64_t>(x) / n);
    } else {
      return static_cast<T>(static_cast<std::uint64_t>(x) / static_cast<std::uint64_t>(n));
    }
  }
  static bool same(T a, T b) { return a == b; }
};

template <typename F>
struct FloatTraits {
  using Storage = F;
  static F random(std::mt19937_64& rng) { return randomFloat<F>(rng); }
  static F ref(ReduceOp op, F a, F b) { return refFloatOp(op, a, b); }
  static F refDiv(F x, int n) { return x / static_cast<F>(n); }
  static bool same(F a, F b) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
    return std::memcmp(&a, &b, sizeof a) == 0;
  }
};

struct HalfTraits {
  using Storage = std::uint16_t;
  static std::uint16_t random(std::mt19937_64& rng) { return refFloatToHalf(randomFloat<float>(rng)); }
  static std::uint16_t ref(ReduceOp op, std::uint16_t a, std::uint16_t b) {
    return refFloatToHalf(refFloatOp(op, refHalfToFloat(a), refHalfToFloat(b)));
  }
  static std::uint16_t refDiv(std::uint16_t x, int n) {
    return refFloatToHalf(refHalfToFloat(x) / static_cast<float>(n));
  }
  static bool same(std::uint16_t a, std::uint16_t b) {
    return (isHalfNan(a) || isHalfNan(b)) ? isHalfNan(a) && isHalfNan(b) : a == b;
  }
};

struct Bf16Traits {
  using Storage = std::uint16_t;
  static std::uint16_t random(std::mt19937_64& rng) { return refFloatToBf16(randomFloat<float>(rng)); }
  static std::uint16_t ref(ReduceOp op, std::uint16_t a, std::uint16_t b) {
    return refFloatToBf16(refFloatOp(op, refBf16ToFloat(a), refBf16ToFloat(b)));
  }
  static std::uint16_t refDiv(std::uint16_t x, int n) {
    return refFloatToBf16(refBf16ToFloat(x) / static_cast<float>(n));
  }
  static bool same(std::uint16_t a, std::uint16_t b) {
    return (isBf16Nan(a) || isBf16Nan(b)) ? isBf16Nan(a) && isBf16Nan(b) : a == b;
  }
};

// Calls fn.template operator()<Traits>() for the traits of dt.
template <typename Fn>
void withTraits(DataType dt, Fn&& fn) {
  switch (dt) {
    case DataType::F32:
      return fn.template operator()<FloatTraits<float>>();
    case DataType::F64:
      return fn.template operator()<FloatTraits<double>>();
    case DataType::F16:
      return fn.template operator()<HalfTraits>();
    case DataType::BF16:
      return fn.template operator()<Bf16Traits>();
    case DataType::I8:
      return fn.template operator()<IntTraits<std::int8_t>>();
    case DataType::U8:
      return fn.template operator()<IntTraits<std::uint8_t>>();
    case DataType::I32:
      return fn.template operator()<IntTraits<std::int32_t>>();
    case DataType::U32:
      return fn.template operator()<IntTraits<std::uint32_t>>();
    case DataType::I64:
      return fn.template operator()<IntTraits<std::int64_t>>();
    case DataType::U64:
      return fn.template operator()<IntTraits<std::uint64_t>>();
  }
  FAIL() << "unknown datatype " << static_cast<int>(dt);
}

constexpr std::size_t kCounts[] = {0, 1, 7, 1000, 4099};

class ReduceTest : public ::testing::TestWithParam<std::tuple<DataType, ReduceOp>> {};

TEST_P(ReduceTest, MatchesScalarReference) {
  const auto [dt, op] = GetParam();
  withTraits(dt, [&, dt = dt, op = op]<typename Traits>() {
    using S = typename Traits::Storage;
    std::mt19937_64 rng(1234 + 16 * static_cast<int>(dt) + static_cast<int>(op));
    for (std::size_t count : kCounts) {
      // offset 1 makes every buffer start off the vector alignment.
      for (std::size_t offset : {0, 1}) {
        for (Aliasing aliasing : kAliasings) {
          std::vector<S> a(count + offset), b(count + offset), dst(count + offset);
          for (auto& x : a) x = Traits::random(rng);
          for (auto& x : b) x = Traits::random(rng);
          for (auto& x : dst) x = Traits::random(rng);
          // Expected dst[i] for each aliasing, computed before the call changes anything.
          std::vector<S> want(count + offset);
          for (std::size_t i = offset; i < count + offset; ++i) {
            switch (aliasing) {
              case Aliasing::IntoDistinct:
                want[i] = Traits::ref(op, dst[i], a[i]);
                break;
              case Aliasing::IntoSelf:
              case Aliasing::Out3AIsB:
                want[i] = Traits::ref(op, a[i], a[i]);
                break;
              default:
                want[i] = Traits::ref(op, a[i], b[i]);
                break;
            }
          }
          const S* out = reduceAs(aliasing, a.data() + offset, b.data() + offset, dst.data() + offset, count, dt, op);
          std::size_t bad = 0;
          for (std::size_t i = 0; i < count; ++i) {
            if (!Traits::same(out[i], want[i + offset]) && bad++ < 3) {
              ADD_FAILURE() << toString(aliasing) << " count " << count << " offset " << offset << " element "
                            << i << ": got " << +out[i] << ", want " << +want[i + offset];
            }
          }
          ASSERT_EQ(bad, 0u) << toString(aliasing) << " count " << count << " offset " << offset;
        }
      }
    }
  });
}

TEST_P(ReduceTest, LeavesElementsPastCountAlone) {
  const auto [dt, op] = GetParam();
  const std::size_t size = dataTypeSize(dt);
  for (std::size_t count : kCounts) {
    std::vector<unsigned char> dst((count + 1) * size, 0x5a), src((count + 1) * size, 0x11);
    reduceInto(dst.data(), src.data(), count, dt, op);
    for (std::size_t i = count * size; i < dst.size(); ++i) ASSERT_EQ(dst[i], 0x5a) << "count " << count;
  }
}

std::string paramName(const ::testing::TestParamInfo<std::tuple<DataType, ReduceOp>>& info) {
  return std::string(toString(std::get<0>(info.param))) + "_" + toString(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(AllTypesAllOps, ReduceTest,
                         ::testing::Combine(::testing::Values(DataType::F32, DataType::F64, DataType::F16,
                                                              DataType::BF16, DataType::I8, DataType::U8,
                                                              DataType::I32, DataType::U32, DataType::I64,
                                                              DataType::U64),
                                            ::testing::Values(ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Min,
                                                              ReduceOp::Max, ReduceOp::Avg)),
                         paramName);

// ---- Integer wraparound, spelled out.

template <typename T>
T reduceOne(T a, T b, DataType dt, ReduceOp op) {
  reduceInto(&a, &b, 1, dt, op);
  return a;
}

TEST(ReduceWrap, IntegerSumAndProdWrapModulo2n) {
  constexpr auto i32max = std::numeric_limits<std::int32_t>::max();
  constexpr auto i32min = std::numeric_limits<std::int32_t>::min();
  constexpr auto i64min = std::numeric_limits<std::int64_t>::min();
  constexpr auto i64max = std::numeric_limits<std::int64_t>::max();
  constexpr auto u64max = std::numeric_limits<std::uint64_t>::max();
  EXPECT_EQ(reduceOne<std::int32_t>(i32max, 1, DataType::I32, ReduceOp::Sum), i32min);
  EXPECT_EQ(reduceOne<std::int32_t>(i32min, -1, DataType::I32, ReduceOp::Sum), i32max);
  EXPECT_EQ(reduceOne<std::int32_t>(i32min, -1, DataType::I32, ReduceOp::Prod), i32min);
  EXPECT_EQ(reduceOne<std::int32_t>(65536, 65536, DataType::I32, ReduceOp::Prod), 0);
  EXPECT_EQ(reduceOne<std::int64_t>(i64min, -1, DataType::I64, ReduceOp::Sum), i64max);
  EXPECT_EQ(reduceOne<std::int64_t>(i64max, 2, DataType::I64, ReduceOp::Prod), -2);
  EXPECT_EQ(reduceOne<std::uint64_t>(u64max, u64max, DataType::U64, ReduceOp::Prod), 1u);
  EXPECT_EQ(reduceOne<std::uint64_t>(u64max, 2, DataType::U64, ReduceOp::Sum), 1u);
  EXPECT_EQ(reduceOne<std::uint32_t>(0xffffffffu, 1, DataType::U32, ReduceOp::Sum), 0u);
  EXPECT_EQ(reduceOne<std::uint8_t>(255, 1, DataType::U8, ReduceOp::Sum), 0);
  EXPECT_EQ(reduceOne<std::uint8_t>(255, 255, DataType::U8, ReduceOp::Prod), 1);
  EXPECT_EQ(reduceOne<std::int8_t>(127, 1, DataType::I8, ReduceOp::Sum), -128);
  EXPECT_EQ(reduceOne<std::int8_t>(16, 16, DataType::I8, ReduceOp::Prod), 0);
  EXPECT_EQ(reduceOne<std::int8_t>(-128, -1, DataType::I8, ReduceOp::Prod), -128);
  EXPECT_EQ(reduceOne<std::int8_t>(-128, 127, DataType::I8, ReduceOp::Min), -128);
  EXPECT_EQ(reduceOne<std::uint64_t>(u64max, 0, DataType::U64, ReduceOp::Max), u64max);
}

TEST(ReduceNan, FloatMinMaxPropagateNan) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (ReduceOp op : {ReduceOp::Min, ReduceOp::Max}) {
    EXPECT_TRUE(std::isnan(reduceOne(nan, 1.0f, DataType::F32, op)));
    EXPECT_TRUE(std::isnan(reduceOne(1.0f, nan, DataType::F32, op)));
    EXPECT_TRUE(std::isnan(reduceOne(-std::numeric_limits<double>::infinity(),
                                     std::numeric_limits<double>::quiet_NaN(), DataType::F64, op)));
    EXPECT_TRUE(isHalfNan(reduceOne<std::uint16_t>(0x3c00, 0x7e00, DataType::F16, op)));
    EXPECT_TRUE(isBf16Nan(reduceOne<std::uint16_t>(0x7fc0, 0x3f80, DataType::BF16, op)));
  }
  EXPECT_EQ(reduceOne(2.0f, -3.0f, DataType::F32, ReduceOp::Min), -3.0f);
  EXPECT_EQ(reduceOne(2.0f, -3.0f, DataType::F32, ReduceOp::Max), 2.0f);
}

// ---- finishAvg.

class FinishAvgTest : public ::testing::TestWithParam<DataType> {};

TEST_P(FinishAvgTest, MatchesScalarReference) {
  const DataType dt = GetParam();
  withTraits(dt, [&]<typename Traits>() {
    using S = typename Traits::Storage;
    std::mt19937_64 rng(99 + static_cast<int>(dt));
    for (int n : {1, 2, 3, 7, 1000}) {
      for (std::size_t count : kCounts) {
        std::vector<S> v(count);
        for (auto& x : v) x = Traits::random(rng);
        const std::vector<S> before = v;
        finishAvg(v.data(), count, dt, n);
        for (std::size_t i = 0; i < count; ++i) {
          ASSERT_TRUE(Traits::same(v[i], Traits::refDiv(before[i], n)))
              << "n " << n << " count " << count << " element " << i << ": " << +before[i] << " -> " << +v[i];
        }
      }
    }
  });
}

INSTANTIATE_TEST_SUITE_P(AllTypes, FinishAvgTest,
                         ::testing::Values(DataType::F32, DataType::F64, DataType::F16, DataType::BF16,
                                           DataType::I8, DataType::U8, DataType::I32, DataType::U32,
                                           DataType::I64, DataType::U64),
                         [](const auto& param) { return std::string(toString(param.param)); });

TEST(FinishAvg, KnownValues) {
  std::int32_t i32[] = {7, -7, 5, -5, 0};
  finishAvg(i32, 5, DataType::I32, 2);
  EXPECT_EQ(std::vector<std::int32_t>(i32, i32 + 5), (std::vector<std::int32_t>{3, -3, 2, -2, 0}));

  std::int8_t i8[] = {-128, 127};
  finishAvg(i8, 2, DataType::I8, 200);  // divisor beyond the type's range
  EXPECT_EQ(i8[0], 0);
  EXPECT_EQ(i8[1], 0);

  std::uint64_t u64[] = {std::numeric_limits<std::uint64_t>::max()};
  finishAvg(u64, 1, DataType::U64, 3);
  EXPECT_EQ(u64[0], std::numeric_limits<std::uint64_t>::max() / 3);

  std::int64_t i64[] = {std::numeric_limits<std::int64_t>::min()};
  finishAvg(i64, 1, DataType::I64, 1);
  EXPECT_EQ(i64[0], std::numeric_limits<std::int64_t>::min());

  float f32[] = {1.0f, 10.0f};
  finishAvg(f32, 2, DataType::F32, 3);
  EXPECT_EQ(f32[0], 1.0f / 3.0f);  // exactly: division, not multiplication by 1/3
  EXPECT_EQ(f32[1], 10.0f / 3.0f);

  double f64[] = {1.0};
  finishAvg(f64, 1, DataType::F64, 3);
  EXPECT_EQ(f64[0], 1.0 / 3.0);

  std::uint16_t f16[] = {0x4200};  // 3.0
  finishAvg(f16, 1, DataType::F16, 2);
  EXPECT_EQ(f16[0], 0x3e00);  // 1.5

  std::uint16_t bf16[] = {0x4040};  // 3.0
  finishAvg(bf16, 1, DataType::BF16, 2);
  EXPECT_EQ(bf16[0], 0x3fc0);  // 1.5
}



template <typename Fn>
void expectInvalidArgument(Fn&& fn, const std::string& mustMention) {
  try {
    fn();
    ADD_FAILURE() << "no exception; expected InvalidArgument mentioning " << mustMention;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument) << e.what();
    EXPECT_NE(std::string(e.what()).find(mustMention), std::string::npos) << e.what();
  }
}

TEST(ReduceErrors, UnknownDatatypeOrOpIsInvalidArgument) {
  float x[4] = {}, y[4] = {}, z[4] = {};
  const auto badType = static_cast<DataType>(99);
  const auto badOp = static_cast<ReduceOp>(42);
  for (std::size_t count : {std::size_t{0}, std::size_t{4}}) {
    expectInvalidArgument([&] { reduceInto(x, y, count, badType, ReduceOp::Sum); }, "99");
    expectInvalidArgument([&] { reduceInto(x, y, count, DataType::F32, badOp); }, "42");
    expectInvalidArgument([&] { reduce3(z, x, y, count, badType, ReduceOp::Max); }, "99");
    expectInvalidArgument([&] { reduce3(z, x, y, count, DataType::F32, badOp); }, "42");
    expectInvalidArgument([&] { finishAvg(x, count, badType, 2); }, "99");
    expectInvalidArgument([&] { finishAvg(x, count, static_cast<DataType>(-1), 2); }, "-1");
  }
  expectInvalidArgument([&] { finishAvg(x, 4, DataType::F32, 0); }, "0");
  expectInvalidArgument([&] { finishAvg(x, 4, DataType::I32, -3); }, "-3");
}

}  // namespace
}  // namespace tiercc
