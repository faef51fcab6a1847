// Element types and reduction operators shared by the C++ API and the C ABI.
#pragma once

#include <cstddef>

namespace tiercc {

/// Element types; values match tiercc_datatype_t in tiercc.h.
enum class DataType : int { F32 = 0, F64, F16, BF16, I8, U8, I32, U32, I64, U64 };
inline constexpr int kNumDataTypes = 10;

/// Reduction operators; values match tiercc_redop_t in tiercc.h. Avg divides the sum by size().
enum class ReduceOp : int { Sum = 0, Prod, Min, Max, Avg };
inline constexpr int kNumReduceOps = 5;

/// Size in bytes of one element; throws Error{InvalidArgument} for an unknown type.
std::size_t dataTypeSize(DataType dt);
/// "f32", "bf16", ...; "unknown" for values out of range.
const char* toString(DataType dt);
/// "sum", "prod", "min", "max", "avg"; "unknown" for values out of range.
const char* toString(ReduceOp op);

}  // namespace tiercc
