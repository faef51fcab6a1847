// Element conversions (see convert.hpp).
#include "core/convert.hpp"

#include <cstdint>
#include <cstring>

#include "core/reduce.hpp"

namespace tiercc {

bool isFloatType(DataType dt) {
  return dt == DataType::F32 || dt == DataType::F64 || dt == DataType::F16 || dt == DataType::BF16;
}

void encodeValue(DataType dt, double v, void* out) {
  switch (dt) {
    case DataType::F32: { float f = static_cast<float>(v); std::memcpy(out, &f, 4); return; }
    case DataType::F64: std::memcpy(out, &v, 8); return;
    case DataType::F16: { std::uint16_t h = floatToHalf(static_cast<float>(v)); std::memcpy(out, &h, 2); return; }
    case DataType::BF16: { std::uint16_t h = floatToBf16(static_cast<float>(v)); std::memcpy(out, &h, 2); return; }
    default: {
      std::uint64_t u = static_cast<std::uint64_t>(static_cast<std::int64_t>(v));
      std::memcpy(out, &u, dataTypeSize(dt));  // little-endian: the low bytes
    }
  }
}

double decodeValue(DataType dt, const void* in) {
  switch (dt) {
    case DataType::F32: { float f; std::memcpy(&f, in, 4); return f; }
    case DataType::F64: { double d; std::memcpy(&d, in, 8); return d; }
    case DataType::F16: { std::uint16_t h; std::memcpy(&h, in, 2); return halfToFloat(h); }
    case DataType::BF16: { std::uint16_t h; std::memcpy(&h, in, 2); return bf16ToFloat(h); }
    case DataType::I8: { std::int8_t x; std::memcpy(&x, in, 1); return x; }
    case DataType::U8: { std::uint8_t x; std::memcpy(&x, in, 1); return x; }
    case DataType::I32: { std::int32_t x; std::memcpy(&x, in, 4); return x; }
    case DataType::U32: { std::uint32_t x; std::memcpy(&x, in, 4); return x; }
    case DataType::I64: { std::int64_t x; std::memcpy(&x, in, 8); return static_cast<double>(x); }
    case DataType::U64: { std::uint64_t x; std::memcpy(&x, in, 8); return static_cast<double>(x); }
  }
  return 0;
}

}  // namespace tiercc
