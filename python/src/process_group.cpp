#include "python/src/process_group.hpp"

#include <ATen/ATen.h>
#include <c10/util/Exception.h>
#include <c10/util/StringUtil.h>

#include <iostream>
#include <mutex>

#include "python/src/c10d_store.hpp"
#include "python/src/op_worker.hpp"
#include "python/src/work.hpp"

namespace tiercc::torch {

// What an operation needs after the group that issued it is gone: tensors from emptyShared hold
// it too. Members are destroyed bottom up: the worker finishes its queue while the
// communicator is still there.
struct ProcessGroupTiercc::Core {
  Core(std::shared_ptr<Store> store, int size, int rank)
      : comm(std::move(store), size, rank),
        worker([this](const std::string& what, std::chrono::milliseconds timeout) {
          abort(c10::str(what, " did not finish within the process group's timeout (", timeout.count(), " ms)"));
        }) {}

  /// Stops the communicator (the running operation and every later one fail) and keeps why,
  /// so that their errors say it.
  void abort(const std::string& why) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (abortReason.empty()) abortReason = why;
    }
    comm.abort();
  }
  std::string whyAborted() {
    std::lock_guard<std::mutex> lock(mutex);
    return abortReason;
  }

  Communicator comm;
  std::mutex mutex;
  std::string abortReason;
  OpWorker worker;
};


namespace {

constexpr auto kNoDeadline = std::chrono::milliseconds::max();

}  // namespace

ProcessGroupTiercc::ProcessGroupTiercc(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                       std::chrono::milliseconds timeout)
    : c10d::ProcessGroup(rank, size), timeout_(timeout) {
  try {
    core_ = std::make_shared<Core>(std::make_shared<C10dStore>(store), size, rank);
    where_ = describe();
  } catch (const Error& e) {
    TORCH_CHECK(false, "tiercc: rank ", rank, " of ", size, " could not join its process group: ", e.what());
  }
}

ProcessGroupTiercc::~ProcessGroupTiercc() = default;

c10::intrusive_ptr<c10d::Work> ProcessGroupTiercc::run(c10d::OpType type, const char* name, const std::string& detail,
                                                       std::vector<at::Tensor> outputs,
                                                       std::chrono::milliseconds opTimeout, Body body) {
  {
    std::lock_guard<std::mutex> lock(issueMutex_);
    TORCH_CHECK(!batching_, "tiercc ", name, ": only sends and receives can go in a batch (batch_isend_irecv)");
  }
  // tiercc's own message numbers the collective ("allreduce #20"): the name here says the tensors.
  const std::string what = c10::str(name, " (", detail, ")");
  std::weak_ptr<Core> weak = core_;
  auto work = c10::make_intrusive<TierccWork>(getRank(), type, what, std::move(outputs), [weak](const std::string& why) {
    if (auto core = weak.lock()) core->abort(why);
  });
  // c10d's "unset" timeout is negative: the group's own applies.
  const auto timeout = opTimeout.count() >= 0 ? opTimeout : timeout_;
  Core* core = core_.get();
  core->worker.post(what, timeout, [core, work, body = std::move(body), where = where_] {
    try {
      body(core->comm);
      work->complete(nullptr);
    } catch (const std::exception& e) {
      std::string message = c10::str("tiercc ", work->what(), " failed on ", where, ": ", e.what());
      const std::string why = core->whyAborted();
      if (!why.empty()) message += c10::str(" [aborted because ", why, "]");
      work->complete(std::make_exception_ptr(std::runtime_error(message)));
    }
  });
  return work;
}

at::Tensor ProcessGroupTiercc::emptyShared(const std::vector<int64_t>& sizes, at::ScalarType type) {
  std::int64_t numel = 1;
  for (std::int64_t s : sizes) {
    TORCH_CHECK(s >= 0, "tiercc.torch.empty: size ", s, " is negative");
    numel *= s;
  }
  const std::size_t bytes = std::max<std::size_t>(1, static_cast<std::size_t>(numel) * c10::elementSize(type));
  void* p = nullptr;
  try {
    core_->worker.runAndWait("allocShared", [&] { p = core_->comm.allocShared(bytes); });
  } catch (const Error& e) {
    TORCH_CHECK(false, "tiercc.torch.empty on ", describe(), ": ", e.what());
  }
  // The free is queued like an operation: every rank frees its tensors in the same order, after
  // the operations issued before the tensor died.
  std::shared_ptr<Core> core = core_;
  auto release = [core](void* q) {
    core->worker.post("freeShared", kNoDeadline, [core, q] {
      try {
        core->comm.freeShared(q);
      } catch (const std::exception& e) {
        std::cerr << "tiercc.torch: freeing a shared tensor: " << e.what() << "\n";
      }
    });
  };
  return at::from_blob(p, sizes, release, at::TensorOptions().dtype(type));
}

std::string ProcessGroupTiercc::describe() const {
  const Communicator& c = core_->comm;
  return c10::str("rank ", c.rank(), " of ", c.size(), ", domain ", c.domain(), " of ", c.numDomains(), " (",
                  c.domainSize(), " ranks), scale-out ", c.transportName());
}

TierStats ProcessGroupTiercc::stats() const { return core_->comm.stats(); }

}  // namespace tiercc::torch
