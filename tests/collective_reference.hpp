// Independent reference for the reduction tests: encodes values of every datatype and computes
// the expected result of an op over ranks with plain integer and double arithmetic.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/convert.hpp"
#include "core/reduce.hpp"
#include "tests/support/multiprocess.hpp"
#include "tiercc/types.hpp"

namespace tiercc::test {

inline bool isFloat(DataType dt) { return isFloatType(dt); }
inline void encode(DataType dt, double v, void* out) { encodeValue(dt, v, out); }

/// Input element i of `rank`: small values so that sums and products are exact in every type.
inline double inputValue(ReduceOp op, int rank, std::size_t i) {
  if (op == ReduceOp::Prod) return double(1 + ((i + rank) % 3 == 0));  // 1 or 2
  if (op == ReduceOp::Min || op == ReduceOp::Max) return double((i * 7 + rank * 13) % 31) - 9;
  return double((i * 3 + rank * 5) % 11);
}

/// The exact expected value of element i over n ranks (Avg: before rounding to dt).
inline double expectedValue(ReduceOp op, int n, std::size_t i) {
  double acc = inputValue(op, 0, i);
  for (int r = 1; r < n; ++r) {
    double v = inputValue(op, r, i);
    switch (op) {
      case ReduceOp::Sum: case ReduceOp::Avg: acc += v; break;
      case ReduceOp::Prod: acc *= v; break;
      case ReduceOp::Min: acc = std::min(acc, v); break;
      case ReduceOp::Max: acc = std::max(acc, v); break;
    }
  }
  return acc;
}

/// Encoded expected result; unsigned types see negative Min/Max inputs as large values, so
/// those ops use non-negative inputs for them (see inputFor).
inline std::vector<std::uint8_t> expectedBuffer(DataType dt, ReduceOp op, int n, std::size_t count);

/// Min/Max inputs for unsigned types are shifted to be non-negative.
inline double inputFor(DataType dt, ReduceOp op, int rank, std::size_t i) {
  double v = inputValue(op, rank, i);
  bool unsignedType = dt == DataType::U8 || dt == DataType::U32 || dt == DataType::U64;
  return unsignedType && (op == ReduceOp::Min || op == ReduceOp::Max) ? v + 9 : v;
}

inline std::vector<std::uint8_t> inputBuffer(DataType dt, ReduceOp op, int rank, std::size_t count) {
  std::size_t es = dataTypeSize(dt);
  std::vector<std::uint8_t> buf(count * es);
  for (std::size_t i = 0; i < count; ++i) encode(dt, inputFor(dt, op, rank, i), buf.data() + i * es);
  return buf;
}

inline std::vector<std::uint8_t> expectedBuffer(DataType dt, ReduceOp op, int n, std::size_t count) {
  std::size_t es = dataTypeSize(dt);
  bool unsignedType = dt == DataType::U8 || dt == DataType::U32 || dt == DataType::U64;
  std::vector<std::uint8_t> buf(count * es);
  for (std::size_t i = 0; i < count; ++i) {
    double v = expectedValue(op, n, i);
    if (unsignedType && (op == ReduceOp::Min || op == ReduceOp::Max)) v += 9;
    if (op == ReduceOp::Avg) {
      if (isFloat(dt)) {
        // The library divides in the type's compute precision (f32 for f16/bf16).
        v = dt == DataType::F64 ? v / n : double(float(v) / float(n));
      } else {
        v = std::trunc(v / n);
      }
    }
    encode(dt, v, buf.data() + i * es);
  }
  return buf;
}

inline double decode(DataType dt, const std::uint8_t* p) { return decodeValue(dt, p); }

/// Exact match, except float Avg, whose last bit depends on how the division is done.
inline void checkResult(DataType dt, ReduceOp op, const std::vector<std::uint8_t>& got,
                 const std::vector<std::uint8_t>& want, const std::string& what) {
  std::size_t es = dataTypeSize(dt);
  for (std::size_t i = 0; i * es < want.size(); ++i) {
    const std::uint8_t* g = got.data() + i * es;
    const std::uint8_t* w = want.data() + i * es;
    if (std::memcmp(g, w, es) == 0) continue;
    if (op == ReduceOp::Avg && isFloat(dt)) {
      double a = decode(dt, g), b = decode(dt, w);
      double tol = es == 2 ? 1e-2 : 1e-6;
      if (std::fabs(a - b) <= tol * std::max(1.0, std::fabs(b))) continue;
      TIERCC_CHECK(false, what << ": element " << i << " is " << a << ", expected " << b);
    }
    TIERCC_CHECK(false, what << ": element " << i << " differs from the reference");
  }
}

}  // namespace tiercc::test
