// How tiercc sees a torch tensor: its element type and count, the reduction operator, and a
// dense buffer to hand tiercc when the tensor itself is not contiguous.
#pragma once

#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/Types.hpp>

#include <cstddef>

#include <tiercc/types.hpp>

namespace tiercc::torch {

/// What a collective does with its tensors' values, which decides the types it accepts.
enum class Use { Move, Reduce };

/// tiercc's element type for a tensor: complex tensors travel as pairs of reals, bool as u8.
/// Throws c10::Error naming the operation and the type when tiercc has none for it.
DataType dataTypeOf(const at::Tensor& t, const char* op, Use use);
/// Number of tiercc elements in t (2 per complex element).
std::size_t countOf(const at::Tensor& t);
/// tiercc's operator for a c10d one on tensors of type t; c10::Error for bitwise operators,
/// pre-multiplied sums, and operators that have no meaning for complex or bool values.
ReduceOp reduceOpOf(const c10d::ReduceOp& op, const at::Tensor& t, const char* opName);

/// Checks what every tensor of every operation must be: defined, on the CPU, not sparse.
void requireCpuDense(const at::Tensor& t, const char* op, const char* role);

/// A tensor's values as one dense block: the tensor itself when contiguous, else a contiguous
/// copy; writeBack() then copies the block into the tensor (for outputs).
class DenseBuffer {
 public:
  DenseBuffer() = default;
  explicit DenseBuffer(const at::Tensor& t);
  void* data() const { return dense_.data_ptr(); }
  const at::Tensor& dense() const { return dense_; }
  void writeBack();

 private:
  at::Tensor user_, dense_;
};

}  // namespace tiercc::torch
