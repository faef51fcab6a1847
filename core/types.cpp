// Names and sizes of the public enums.
#include "core/errors.hpp"
#include "tiercc/error.hpp"
#include "tiercc/types.hpp"

namespace tiercc {

std::size_t dataTypeSize(DataType dt) {
  switch (dt) {
    case DataType::I8:
    case DataType::U8: return 1;
    case DataType::F16:
    case DataType::BF16: return 2;
    case DataType::F32:
    case DataType::I32:
    case DataType::U32: return 4;
    case DataType::F64:
    case DataType::I64:
    case DataType::U64: return 8;
  }
  fail(ErrorCode::InvalidArgument, "unknown datatype ", static_cast<int>(dt), " (valid: 0..",
       kNumDataTypes - 1, ")");
}

const char* toString(DataType dt) {
  static const char* const names[] = {"f32", "f64", "f16", "bf16", "i8", "u8", "i32", "u32", "i64", "u64"};
  int i = static_cast<int>(dt);
  return i >= 0 && i < kNumDataTypes ? names[i] : "unknown";
}

const char* toString(ReduceOp op) {
  static const char* const names[] = {"sum", "prod", "min", "max", "avg"};
  int i = static_cast<int>(op);
  return i >= 0 && i < kNumReduceOps ? names[i] : "unknown";
}

const char* toString(ErrorCode code) {
  switch (code) {
    case ErrorCode::Ok: return "success";
    case ErrorCode::InvalidArgument: return "invalid argument";
    case ErrorCode::Timeout: return "timeout";
    case ErrorCode::PeerFailure: return "peer failure";
    case ErrorCode::TransportError: return "transport error";
    case ErrorCode::SystemError: return "system error";
    case ErrorCode::Aborted: return "aborted";
    case ErrorCode::Internal: return "internal error";
    case ErrorCode::NotSupported: return "not supported yet";
  }
  return "unknown error";
}

}  // namespace tiercc
