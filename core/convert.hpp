// Converting one element of any DataType to and from double: for checks in tests and tools,
// and anywhere a value must be written in a run-time type.
#pragma once

#include <cstddef>

#include "tiercc/types.hpp"

namespace tiercc {

/// Writes v as one element of dt. Integers wrap modulo 2^bits (as tiercc's integer
/// arithmetic does); floats round to nearest.
void encodeValue(DataType dt, double v, void* out);
/// Reads one element of dt as a double.
double decodeValue(DataType dt, const void* in);
/// True for f32, f64, f16, bf16.
bool isFloatType(DataType dt);

}  // namespace tiercc
