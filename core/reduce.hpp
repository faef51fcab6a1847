// Element-wise reduction kernels for every DataType x ReduceOp; f16/bf16 are computed in f32.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tiercc/types.hpp"

namespace tiercc {

/// dst[i] = op(dst[i], src[i]) for i < count. Avg accumulates as Sum (finish with finishAvg).
/// dst and src may be the same pointer; otherwise they must not overlap.
void reduceInto(void* dst, const void* src, std::size_t count, DataType dt, ReduceOp op);

/// dst[i] = op(a[i], b[i]): the out-of-place form (dst may equal a or b).
void reduce3(void* dst, const void* a, const void* b, std::size_t count, DataType dt, ReduceOp op);

/// dst[i] /= n, for finishing an Avg (integer types divide with truncation toward zero).
void finishAvg(void* dst, std::size_t count, DataType dt, int n);

/// IEEE half and bfloat16 conversions (round to nearest even; NaN stays NaN).
float halfToFloat(std::uint16_t h);
std::uint16_t floatToHalf(float f);
float bf16ToFloat(std::uint16_t b);
std::uint16_t floatToBf16(float f);

}  // namespace tiercc
