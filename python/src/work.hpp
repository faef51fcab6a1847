// The c10d Work of a tiercc operation: completed by the process group's worker, with the output
// tensors as its result and as the value of its Future (DDP's reducer chains on the Future).
#pragma once

#include <ATen/core/ivalue.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace tiercc::torch {

class TierccWork final : public c10d::Work {
 public:
  /// `onWaitTimeout` is called when wait(timeout) gives up: it aborts the operation (and the
  /// communicator), since an operation that one rank abandons cannot complete on the others.
  TierccWork(int rank, c10d::OpType type, std::string what, std::vector<at::Tensor> outputs,
             std::function<void(const std::string& why)> onWaitTimeout);

  bool wait(std::chrono::milliseconds timeout) override;
  std::vector<at::Tensor> result() override { return outputs_; }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return future_; }

  /// Called once by the worker: null for success, else the error to rethrow on wait().
  void complete(std::exception_ptr error);
  const std::string& what() const { return what_; }

 private:
  const std::string what_;
  const std::vector<at::Tensor> outputs_;
  std::function<void(const std::string&)> onWaitTimeout_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
};

}  // namespace tiercc::torch
