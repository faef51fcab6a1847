// IEEE binary16 (half) and bfloat16 <-> binary32 conversions, one element at a time (the
// public scalar API of core/reduce.hpp). The bit manipulation lives in core/half_inline.hpp,
// shared with the reduction kernels, which convert whole blocks for their own ISA.
#include <cstdint>

#include "core/half_inline.hpp"
#include "core/reduce.hpp"

namespace tiercc {

float halfToFloat(std::uint16_t h) { return half_bits::halfToFloatInline(h); }
std::uint16_t floatToHalf(float f) { return half_bits::floatToHalfInline(f); }
float bf16ToFloat(std::uint16_t b) { return half_bits::bf16ToFloatInline(b); }
std::uint16_t floatToBf16(float f) { return half_bits::floatToBf16Inline(f); }

}  // namespace tiercc
