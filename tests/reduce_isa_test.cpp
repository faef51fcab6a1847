// Every ISA's reduction kernels (core/reduce_isa.hpp) against the generic ones, bit for bit.
#include "core/reduce_isa.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "core/reduce.hpp"
#include "tests/half_reference.hpp"
#include "tests/reduce_cases.hpp"
#include "tiercc/error.hpp"
#include "tiercc/types.hpp"

namespace tiercc {
namespace {

using namespace tiercc::test;

// ---- Every ISA's kernels against the generic ones, bit for bit (NaN payloads included): ranks
// on different CPUs must agree exactly. Inputs are raw random bits, so NaNs with payloads,
// signalling NaNs, subnormals and infinities all occur, plus ordinary values that round.

// Switches the kernels for one test and restores the ones in use before.
class IsaScope {
 public:
  explicit IsaScope(const std::string& isa) : before_(reduceIsaName()) { setReduceIsaForTesting(isa); }
  ~IsaScope() { setReduceIsaForTesting(before_); }
  IsaScope(const IsaScope&) = delete;
  IsaScope& operator=(const IsaScope&) = delete;

 private:
  std::string before_;
};

// Element bytes: half raw bits (every pattern), half ordinary values of the type.
std::vector<unsigned char> randomElements(DataType dt, std::size_t count, std::mt19937_64& rng) {
  const std::size_t size = dataTypeSize(dt);
  std::vector<unsigned char> bytes(count * size);
  for (std::size_t i = 0; i < count; ++i) {
    std::uint64_t bits = rng();
    if (rng() % 2 == 0) {
      const float f = randomFloat<float>(rng);
      const double d = randomFloat<double>(rng);
      switch (dt) {
        case DataType::F32:
          bits = std::bit_cast<std::uint32_t>(f);
          break;
        case DataType::F64:
          bits = std::bit_cast<std::uint64_t>(d);
          break;
        case DataType::F16:
          bits = refFloatToHalf(f);
          break;
        case DataType::BF16:
          bits = refFloatToBf16(f);
          break;
        default:  // small integers: products that do not wrap at once
          bits %= 7;
          break;
      }
    }
    std::memcpy(&bytes[i * size], &bits, size);  // little-endian: the low bytes
  }
  return bytes;
}

std::string supportedIsas() {
  std::string out;
  for (const std::string& isa : reduceIsaNames())
    if (reduceIsaSupported(isa)) out += (out.empty() ? "" : ", ") + isa;
  return out;
}

// Buffers a, b, dst with one spare element in front (for the misaligned offset) and one behind.
struct Buffers {
  std::vector<unsigned char> a, b, dst;
};

// Runs one call pattern on copies of `in` with the ISA's kernels; returns the buffers after it.
Buffers runWith(const std::string& isa, const Buffers& in, Aliasing aliasing, std::size_t count, std::size_t offset,
                DataType dt, ReduceOp op) {
  IsaScope scope(isa);
  Buffers io = in;
  const std::size_t at = offset * dataTypeSize(dt);
  unsigned char* out = reduceAs(aliasing, io.a.data() + at, io.b.data() + at, io.dst.data() + at, count, dt, op);
  if (op == ReduceOp::Avg) finishAvg(out, count, dt, 3);
  return io;
}

// The first element where two buffers differ, as text; "" if they are equal.
std::string firstDifference(const std::vector<unsigned char>& got, const std::vector<unsigned char>& want,
                            std::size_t size) {
  for (std::size_t i = 0; i < got.size(); i += size) {
    if (std::memcmp(&got[i], &want[i], size) == 0) continue;
    std::uint64_t g = 0, w = 0;
    std::memcpy(&g, &got[i], size);
    std::memcpy(&w, &want[i], size);
    std::ostringstream text;
    text << "element " << i / size << ": got 0x" << std::hex << g << ", generic gives 0x" << w;
    return text.str();
  }
  return "";
}

using IsaParam = std::tuple<std::string, DataType, ReduceOp>;

class ReduceIsaTest : public ::testing::TestWithParam<IsaParam> {
 protected:
  void SetUp() override {
    const std::string& isa = std::get<0>(GetParam());
    if (!reduceIsaSupported(isa))
      GTEST_SKIP() << "this CPU cannot run the " << isa << " kernels (it runs: " << supportedIsas() << ")";
  }
};

constexpr std::size_t kIsaCounts[] = {0, 1, 7, 33, 1000, 4099};

TEST_P(ReduceIsaTest, BitIdenticalToGeneric) {
  const auto& [isa, dt, op] = GetParam();
  const std::size_t size = dataTypeSize(dt);
  std::mt19937_64 rng(77 + 16 * static_cast<int>(dt) + static_cast<int>(op));
  for (std::size_t count : kIsaCounts) {
    for (std::size_t offset : {0, 1}) {  // 1: every pointer off the vector alignment
      const Buffers in{randomElements(dt, count + 2, rng), randomElements(dt, count + 2, rng),
                       randomElements(dt, count + 2, rng)};
      for (Aliasing aliasing : kAliasings) {
        const Buffers want = runWith("generic", in, aliasing, count, offset, dt, op);
        const Buffers got = runWith(isa, in, aliasing, count, offset, dt, op);
        const std::string where = std::string(toString(aliasing)) + " count " + std::to_string(count) + " offset " +
                                  std::to_string(offset) + ", ";
        ASSERT_EQ(firstDifference(got.a, want.a, size), "") << where << "buffer a";
        ASSERT_EQ(firstDifference(got.b, want.b, size), "") << where << "buffer b";
        ASSERT_EQ(firstDifference(got.dst, want.dst, size), "") << where << "buffer dst";
      }
    }
  }
}

// Every 16-bit pattern as the left operand, so each conversion path sees every input.
class ReduceIsaSixteenBitTest : public ReduceIsaTest {};

TEST_P(ReduceIsaSixteenBitTest, EveryPatternBitIdenticalToGeneric) {
  const auto& [isa, dt, op] = GetParam();
  constexpr std::size_t kAll = 1u << 16;
  std::mt19937_64 rng(5);
  Buffers in{std::vector<unsigned char>(2 * kAll), randomElements(dt, kAll, rng), randomElements(dt, kAll, rng)};
  for (std::size_t i = 0; i < kAll; ++i) {
    const auto bits = static_cast<std::uint16_t>(i);
    std::memcpy(&in.a[2 * i], &bits, 2);
  }
  const Buffers want = runWith("generic", in, Aliasing::Out3Distinct, kAll, 0, dt, op);
  const Buffers got = runWith(isa, in, Aliasing::Out3Distinct, kAll, 0, dt, op);
  EXPECT_EQ(firstDifference(got.dst, want.dst, 2), "");
}

std::string isaParamName(const ::testing::TestParamInfo<IsaParam>& info) {
  return std::get<0>(info.param) + "_" + toString(std::get<1>(info.param)) + "_" + toString(std::get<2>(info.param));
}

// generic is the reference; a new ISA goes here and in core/reduce_isa.cpp.
const auto kVectorIsas = ::testing::Values("avx512", "avx2");

INSTANTIATE_TEST_SUITE_P(
    AllIsas, ReduceIsaTest,
    ::testing::Combine(kVectorIsas,
                       ::testing::Values(DataType::F32, DataType::F64, DataType::F16, DataType::BF16, DataType::I8,
                                         DataType::U8, DataType::I32, DataType::U32, DataType::I64, DataType::U64),
                       ::testing::Values(ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Min, ReduceOp::Max, ReduceOp::Avg)),
    isaParamName);

INSTANTIATE_TEST_SUITE_P(AllIsas, ReduceIsaSixteenBitTest,
                         ::testing::Combine(kVectorIsas, ::testing::Values(DataType::F16, DataType::BF16),
                                            ::testing::Values(ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Min,
                                                              ReduceOp::Max, ReduceOp::Avg)),
                         isaParamName);

TEST(ReduceIsa, ReportsAnIsaThisCpuRuns) {
  const std::string active = reduceIsaName();
  EXPECT_TRUE(reduceIsaSupported(active)) << active;
  EXPECT_TRUE(reduceIsaSupported("generic"));
  EXPECT_FALSE(reduceIsaSupported("avx9000"));
}

TEST(ReduceIsa, ForcingAnIsaSwitchesTheKernels) {
  for (const std::string& isa : reduceIsaNames()) {
    if (!reduceIsaSupported(isa)) continue;
    IsaScope scope(isa);
    EXPECT_EQ(std::string(reduceIsaName()), isa);
  }
}

TEST(ReduceIsa, UnknownOrMissingIsaIsInvalidArgumentNamingWhatTheCpuHas) {
  const std::string before = reduceIsaName();
  try {
    setReduceIsaForTesting("avx9000");
    ADD_FAILURE() << "no exception for an unknown ISA";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument) << e.what();
    EXPECT_NE(std::string(e.what()).find("generic"), std::string::npos) << e.what();
  }
  for (const std::string& isa : reduceIsaNames()) {
    if (reduceIsaSupported(isa)) continue;
    try {
      setReduceIsaForTesting(isa);
      ADD_FAILURE() << "no exception for " << isa << ", which this CPU lacks";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::InvalidArgument) << e.what();
      EXPECT_NE(std::string(e.what()).find("it can run: " + supportedIsas()), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(std::string(reduceIsaName()), before) << "a refused request must not change the kernels";
}

}  // namespace
}  // namespace tiercc
