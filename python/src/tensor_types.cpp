#include "python/src/tensor_types.hpp"

#include <c10/util/Exception.h>

namespace tiercc::torch {

DataType dataTypeOf(const at::Tensor& t, const char* op, Use use) {
  switch (t.scalar_type()) {
    case at::kFloat: return DataType::F32;
    case at::kDouble: return DataType::F64;
    case at::kHalf: return DataType::F16;
    case at::kBFloat16: return DataType::BF16;
    case at::kChar: return DataType::I8;
    case at::kByte: return DataType::U8;
    case at::kInt: return DataType::I32;
    case at::kLong: return DataType::I64;
    case at::kComplexFloat: return DataType::F32;
    case at::kComplexDouble: return DataType::F64;
    case at::kBool: return DataType::U8;  // min and max are logical and and or on 0/1 bytes
    default: break;
  }
  TORCH_CHECK(false, "tiercc ", op, ": tensors of type ", t.scalar_type(), " are not supported (",
              use == Use::Reduce ? "reductions" : "data movement",
              " takes float32, float64, float16, bfloat16, int8, uint8, int32, int64, complex64, "
              "complex128 and bool)");
}

std::size_t countOf(const at::Tensor& t) {
  return static_cast<std::size_t>(t.numel()) * (t.is_complex() ? 2 : 1);
}

ReduceOp reduceOpOf(const c10d::ReduceOp& op, const at::Tensor& t, const char* opName) {
  ReduceOp out = ReduceOp::Sum;
  switch (op.op_) {
    case c10d::ReduceOp::SUM: out = ReduceOp::Sum; break;
    case c10d::ReduceOp::AVG: out = ReduceOp::Avg; break;
    case c10d::ReduceOp::PRODUCT: out = ReduceOp::Prod; break;
    case c10d::ReduceOp::MIN: out = ReduceOp::Min; break;
    case c10d::ReduceOp::MAX: out = ReduceOp::Max; break;
    default:
      TORCH_CHECK(false, "tiercc ", opName, ": reduce op ", static_cast<int>(op.op_),
                  " is not supported (SUM, AVG, PRODUCT, MIN and MAX are; bitwise ops and PREMUL_SUM are not)");
  }
  // Complex numbers travel as (re, im) pairs: only sums and averages are element-wise there.
  TORCH_CHECK(!t.is_complex() || out == ReduceOp::Sum || out == ReduceOp::Avg, "tiercc ", opName,
              ": complex tensors reduce with SUM or AVG only");
  TORCH_CHECK(t.scalar_type() != at::kBool || out == ReduceOp::Min || out == ReduceOp::Max, "tiercc ", opName,
              ": bool tensors reduce with MIN or MAX only (logical and, or)");
  return out;
}

void requireCpuDense(const at::Tensor& t, const char* op, const char* role) {
  TORCH_CHECK(t.defined(), "tiercc ", op, ": the ", role, " tensor is undefined");
  TORCH_CHECK(t.device().is_cpu(), "tiercc ", op, ": the ", role, " tensor is on ", t.device(),
              "; the tiercc backend takes CPU tensors");
  TORCH_CHECK(t.layout() == at::kStrided, "tiercc ", op, ": the ", role, " tensor is sparse; dense tensors only");
}

DenseBuffer::DenseBuffer(const at::Tensor& t) : user_(t), dense_(t.is_contiguous() ? t : t.contiguous()) {}

void DenseBuffer::writeBack() {
  if (!dense_.is_same(user_)) user_.copy_(dense_);
}

}  // namespace tiercc::torch
