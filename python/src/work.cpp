#include "python/src/work.hpp"

#include <ATen/core/jit_type.h>
#include <c10/util/Exception.h>

#include <iostream>

namespace tiercc::torch {

TierccWork::TierccWork(int rank, c10d::OpType type, std::string what, std::vector<at::Tensor> outputs,
                       std::function<void(const std::string& why)> onWaitTimeout)
    : c10d::Work(rank, type),
      what_(std::move(what)),
      outputs_(std::move(outputs)),
      onWaitTimeout_(std::move(onWaitTimeout)),
      future_(c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()))) {}

// The Future first: a caller woken from wait() may read get_future().value() at once. Its
// callbacks (DDP's bucket handling) run here, on the worker.
void TierccWork::complete(std::exception_ptr error) {
  try {
    if (error)
      future_->setError(error);
    else
      future_->markCompleted(c10::IValue(outputs_));
  } catch (const std::exception& e) {  // a callback that throws must not leave wait() hanging
    std::cerr << "tiercc.torch: a callback on the future of " << what_ << " threw: " << e.what() << "\n";
  }
  finish(error);  // wakes wait()
}

bool TierccWork::wait(std::chrono::milliseconds timeout) {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    if (timeout == kNoTimeout) {
      cv_.wait(lock, [&] { return completed_; });  // the worker's watchdog bounds the operation
    } else if (!cv_.wait_for(lock, timeout, [&] { return completed_; })) {
      lock.unlock();
      const std::string why = what_ + ": wait() timed out after " + std::to_string(timeout.count()) + " ms";
      onWaitTimeout_(why);
      TORCH_CHECK(false, "tiercc ", why, "; the communicator is aborted, later operations on it fail");
    }
    if (exception_) std::rethrow_exception(exception_);
  }
  return true;
}

}  // namespace tiercc::torch
