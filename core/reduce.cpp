// Element-wise reductions (reduceInto, reduce3, finishAvg): argument checks, then one call through
// the kernel table of the ISA this process runs (core/reduce_isa.cpp). The kernels themselves,
// one template per DataType x op compiled once per ISA, are core/reduce_kernels_impl.hpp.
#include "core/reduce.hpp"

#include <cstddef>

#include "core/errors.hpp"
#include "core/reduce_isa.hpp"
#include "core/reduce_kernels.hpp"

namespace tiercc {
namespace {

int typeIndex(DataType dt) {
  const int t = static_cast<int>(dt);
  if (t < 0 || t >= kNumDataTypes)
    fail(ErrorCode::InvalidArgument, "unknown datatype ", t, " (valid: 0..", kNumDataTypes - 1, ")");
  return t;
}

// Avg accumulates as Sum; finishAvg divides at the end.
int opIndex(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Avg:
      return static_cast<int>(ReduceOp::Sum);
    case ReduceOp::Prod:
    case ReduceOp::Min:
    case ReduceOp::Max:
      return static_cast<int>(op);
  }
  fail(ErrorCode::InvalidArgument, "unknown reduction op ", static_cast<int>(op), " (valid: 0..", kNumReduceOps - 1,
       ")");
}

void dispatch(void* dst, const void* a, const void* b, std::size_t n, DataType dt, ReduceOp op) {
  const int t = typeIndex(dt);
  const int o = opIndex(op);
  activeReduceKernels().reduce[t][o](dst, a, b, n);
}

}  // namespace

void reduceInto(void* dst, const void* src, std::size_t count, DataType dt, ReduceOp op) {
  dispatch(dst, dst, src, count, dt, op);
}

void reduce3(void* dst, const void* a, const void* b, std::size_t count, DataType dt, ReduceOp op) {
  dispatch(dst, a, b, count, dt, op);
}

void finishAvg(void* dst, std::size_t count, DataType dt, int n) {
  TIERCC_REQUIRE_ARG(n > 0, "finishAvg: divisor must be positive, got ", n);
  const int t = typeIndex(dt);
  activeReduceKernels().divide[t](dst, count, n);
}

}  // namespace tiercc
