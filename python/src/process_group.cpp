#include "python/src/process_group.hpp"

#include <ATen/ATen.h>
#include <c10/util/Exception.h>
#include <c10/util/StringUtil.h>

#include <algorithm>
#include <iostream>
#include <mutex>

#include "python/src/c10d_store.hpp"
#include "python/src/op_worker.hpp"
#include "python/src/tensor_types.hpp"
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
// What c10d's options hold when the caller gave no timeout: the group's applies.
constexpr auto kGroupTimeout = c10d::kUnsetTimeout;

const at::Tensor& single(const std::vector<at::Tensor>& tensors, const char* op) {
  TORCH_CHECK(tensors.size() == 1, "tiercc ", op, ": takes one tensor per call (one device per process), got ",
              tensors.size());
  requireCpuDense(tensors[0], op, "input");
  return tensors[0];
}

std::string detailOf(const at::Tensor& t) { return c10::str(t.scalar_type(), ", ", t.numel(), " elements"); }

void requireSameType(const at::Tensor& t, const at::Tensor& like, const char* op, const char* role) {
  TORCH_CHECK(t.scalar_type() == like.scalar_type(), "tiercc ", op, ": the ", role, " tensor is ", t.scalar_type(),
              " but the input is ", like.scalar_type());
}

void requireRank(std::int64_t r, int size, const char* op, const char* role) {
  TORCH_CHECK(r >= 0 && r < size, "tiercc ", op, ": ", role, " ", r, " is not a rank of this group (size ", size,
              ")");
}

// The one list of `size` tensors an operation takes (torch wraps it in an outer list), each like
// `like` in type and element count.
const std::vector<at::Tensor>& listLike(const std::vector<std::vector<at::Tensor>>& lists, const at::Tensor& like,
                                        int size, const char* op, const char* role) {
  TORCH_CHECK(lists.size() == 1 && lists[0].size() == static_cast<std::size_t>(size), "tiercc ", op, ": needs one ",
              role, " list of ", size, " tensors");
  for (const at::Tensor& t : lists[0]) {
    requireCpuDense(t, op, role);
    requireSameType(t, like, op, role);
    TORCH_CHECK(t.numel() == like.numel(), "tiercc ", op, ": an ", role, " tensor has ", t.numel(),
                " elements; it needs ", like.numel());
  }
  return lists[0];
}

// Ranks other than the root of gather (scatter) pass no output (input) list.
void requireNoList(const std::vector<std::vector<at::Tensor>>& lists, int root, const char* op, const char* role) {
  TORCH_CHECK(lists.empty() || (lists.size() == 1 && lists[0].empty()), "tiercc ", op, ": only the root (rank ", root,
              ") takes an ", role, " list");
}

// Whether the tensors lie back to back in one block, as torch.empty(n * k).chunk(k) makes them:
// then a collective writes them in place, with no gather buffer and no copies out of it.
bool backToBack(const std::vector<at::Tensor>& ts) {
  if (ts.empty()) return false;
  auto* next = static_cast<const char*>(ts[0].data_ptr());
  for (const at::Tensor& t : ts) {
    if (!t.is_contiguous() || t.scalar_type() != ts[0].scalar_type() || t.data_ptr() != next) return false;
    next += t.numel() * t.element_size();
  }
  return true;
}

// The tensors' values one after the other, in a new dense tensor.
at::Tensor packed(const std::vector<at::Tensor>& ts) {
  std::vector<at::Tensor> flat;
  flat.reserve(ts.size());
  for (const at::Tensor& t : ts) flat.push_back(t.reshape({-1}));
  return at::cat(flat);
}

// Copies consecutive runs of `flat` into the tensors.
void unpack(const at::Tensor& flat, const std::vector<at::Tensor>& ts) {
  std::int64_t at = 0;
  for (const at::Tensor& t : ts) {
    t.copy_(flat.narrow(0, at, t.numel()).view(t.sizes()));
    at += t.numel();
  }
}

std::int64_t totalElements(const std::vector<at::Tensor>& ts) {
  std::int64_t n = 0;
  for (const at::Tensor& t : ts) n += t.numel();
  return n;
}

// Element counts and offsets of tiercc's all-to-allv, one per rank.
struct Exchange {
  std::vector<std::size_t> sendCounts, sendDispls, recvCounts, recvDispls;
  explicit Exchange(int size) : sendCounts(size, 0), sendDispls(size, 0), recvCounts(size, 0), recvDispls(size, 0) {}
  void run(Communicator& c, const void* send, void* recv, DataType dt) const {
    c.alltoallv(send, sendCounts.data(), sendDispls.data(), recv, recvCounts.data(), recvDispls.data(), dt);
  }
};

// Offsets from counts, in order.
void offsets(const std::vector<std::size_t>& counts, std::vector<std::size_t>& displs) {
  std::size_t at = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    displs[i] = at;
    at += counts[i];
  }
}

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

c10::intrusive_ptr<c10d::Work> ProcessGroupTiercc::broadcast(std::vector<at::Tensor>& tensors,
                                                             const c10d::BroadcastOptions& opts) {
  const at::Tensor& t = single(tensors, "broadcast");
  const DataType dt = dataTypeOf(t, "broadcast", Use::Move);
  requireRank(opts.rootRank, getSize(), "broadcast", "root");
  TORCH_CHECK(opts.rootTensor == 0, "tiercc broadcast: rootTensor must be 0 (one tensor per process)");
  const int root = static_cast<int>(opts.rootRank);
  return run(c10d::OpType::BROADCAST, "broadcast", detailOf(t), {t}, opts.timeout, [t, dt, root](Communicator& c) {
    DenseBuffer b(t);
    c.broadcast(b.data(), b.data(), countOf(t), dt, root);
    b.writeBack();
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupTiercc::allreduce(std::vector<at::Tensor>& tensors,
                                                             const c10d::AllreduceOptions& opts) {
  const at::Tensor& t = single(tensors, "allreduce");
  const DataType dt = dataTypeOf(t, "allreduce", Use::Reduce);
  const ReduceOp op = reduceOpOf(opts.reduceOp, t, "allreduce");
  return run(c10d::OpType::ALLREDUCE, "allreduce", detailOf(t), {t}, opts.timeout, [t, dt, op](Communicator& c) {
    DenseBuffer b(t);
    c.allreduce(b.data(), b.data(), countOf(t), dt, op);
    b.writeBack();
  });
}

// Several tensors of one type as one allreduce of their concatenation (DDP's buckets do the same).
c10::intrusive_ptr<c10d::Work> ProcessGroupTiercc::allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                                                       const c10d::AllreduceCoalescedOptions& opts) {
  TORCH_CHECK(!tensors.empty(), "tiercc allreduce_coalesced: no tensors");
  for (const at::Tensor& t : tensors) {
    requireCpuDense(t, "allreduce_coalesced", "input");
    requireSameType(t, tensors[0], "allreduce_coalesced", "every");
  }
  const DataType dt = dataTypeOf(tensors[0], "allreduce_coalesced", Use::Reduce);
  const ReduceOp op = reduceOpOf(opts.reduceOp, tensors[0], "allreduce_coalesced");
  const std::string detail = c10::str(tensors.size(), " tensors of ", tensors[0].scalar_type(), ", ",
                                      totalElements(tensors), " elements");
  return run(c10d::OpType::ALLREDUCE_COALESCED, "allreduce_coalesced", detail, tensors, opts.timeout,
             [ts = tensors, dt, op](Communicator& c) {
               at::Tensor flat = packed(ts);
               c.allreduce(flat.data_ptr(), flat.data_ptr(), countOf(flat), dt, op);
               unpack(flat, ts);
             });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupTiercc::reduce(std::vector<at::Tensor>& tensors,
                                                          const c10d::ReduceOptions& opts) {
  const at::Tensor& t = single(tensors, "reduce");
  const DataType dt = dataTypeOf(t, "reduce", Use::Reduce);
  const ReduceOp op = reduceOpOf(opts.reduceOp, t, "reduce");
  requireRank(opts.rootRank, getSize(), "reduce", "root");
  TORCH_CHECK(opts.rootTensor == 0, "tiercc reduce: rootTensor must be 0 (one tensor per process)");
  const int root = static_cast<int>(opts.rootRank);
  return run(c10d::OpType::REDUCE, "reduce", detailOf(t), {t}, opts.timeout, [t, dt, op, root](Communicator& c) {
    DenseBuffer b(t);
    c.reduce(b.data(), b.data(), countOf(t), dt, op, root);
    b.writeBack();
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupTiercc::allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                                             std::vector<at::Tensor>& inputs,
                                                             const c10d::AllgatherOptions& opts) {
  const at::Tensor& in = single(inputs, "allgather");
  const DataType dt = dataTypeOf(in, "allgather", Use::Move);
  const std::vector<at::Tensor>& outs = listLike(outputs, in, getSize(), "allgather", "output");
  const int size = getSize();
  return run(c10d::OpType::ALLGATHER, "allgather", detailOf(in), outs, opts.timeout,
             [in, outs, dt, size](Communicator& c) {
               DenseBuffer src(in);
               if (backToBack(outs)) {
                 c.allgather(src.data(), outs[0].data_ptr(), countOf(in), dt);
                 return;
               }
               at::Tensor flat = at::empty({size * in.numel()}, in.options());
               c.allgather(src.data(), flat.data_ptr(), countOf(in), dt);
               unpack(flat, outs);
             });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupTiercc::_allgather_base(at::Tensor& output, at::Tensor& input,
                                                                   const c10d::AllgatherOptions& opts) {
  requireCpuDense(input, "all_gather_into_tensor", "input");
  requireCpuDense(output, "all_gather_into_tensor", "output");
  requireSameType(output, input, "all_gather_into_tensor", "output");
  TORCH_CHECK(output.numel() == input.numel() * getSize(), "tiercc all_gather_into_tensor: the output has ",
              output.numel(), " elements; it needs ", getSize(), " x ", input.numel());
  const DataType dt = dataTypeOf(input, "all_gather_into_tensor", Use::Move);
  return run(c10d::OpType::_ALLGATHER_BASE, "all_gather_into_tensor", detailOf(input), {output}, opts.timeout,
             [in = input, out = output, dt](Communicator& c) {
               DenseBuffer src(in), dst(out);
               c.allgather(src.data(), dst.data(), countOf(in), dt);
               dst.writeBack();
             });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupTiercc::allgather_coalesced(
    std::vector<std::vector<at::Tensor>>& outputLists, std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions& opts) {
  TORCH_CHECK(!inputs.empty(), "tiercc allgather_coalesced: no input tensors");
  TORCH_CHECK(outputLists.size() == static_cast<std::size_t>(getSize()), "tiercc allgather_coalesced: needs ",
              getSize(), " output lists, got ", outputLists.size());
  for (const at::Tensor& t : inputs) {
    requireCpuDense(t, "allgather_coalesced", "input");
    requireSameType(t, inputs[0], "allgather_coalesced", "every input");
  }
  std::vector<at::Tensor> outs;
  for (const auto& list : outputLists) {
    TORCH_CHECK(list.size() == inputs.size(), "tiercc allgather_coalesced: each output list needs ", inputs.size(),
                " tensors");
    for (std::size_t i = 0; i < list.size(); ++i) {
      requireCpuDense(list[i], "allgather_coalesced", "output");
      requireSameType(list[i], inputs[0], "allgather_coalesced", "output");
      TORCH_CHECK(list[i].numel() == inputs[i].numel(), "tiercc allgather_coalesced: output ", i, " has ",
                  list[i].numel(), " elements, input ", i, " has ", inputs[i].numel());
      outs.push_back(list[i]);
    }
  }
  const DataType dt = dataTypeOf(inputs[0], "allgather_coalesced", Use::Move);
  const int size = getSize();
  return run(c10d::OpType::ALLGATHER_COALESCED, "allgather_coalesced",
             c10::str(inputs.size(), " tensors, ", totalElements(inputs), " elements"), outs, opts.timeout,
             [ins = inputs, outs, dt, size](Communicator& c) {
               at::Tensor src = packed(ins);
               at::Tensor flat = at::empty({size * src.numel()}, src.options());
               c.allgather(src.data_ptr(), flat.data_ptr(), countOf(src), dt);
               unpack(flat, outs);  // rank by rank, tensor by tensor: the order of outs
             });
}

// gather and scatter are all-to-allv with one busy root: the hierarchical plan keeps their
// traffic on the fast tier as far as it can, and no rank receives what it does not keep.
c10::intrusive_ptr<c10d::Work> ProcessGroupTiercc::gather(std::vector<std::vector<at::Tensor>>& outputs,
                                                          std::vector<at::Tensor>& inputs,
                                                          const c10d::GatherOptions& opts) {
  const at::Tensor& in = single(inputs, "gather");
  const DataType dt = dataTypeOf(in, "gather", Use::Move);
  requireRank(opts.rootRank, getSize(), "gather", "root");
  const int root = static_cast<int>(opts.rootRank), size = getSize();
  std::vector<at::Tensor> outs;
  if (getRank() == root)
    outs = listLike(outputs, in, size, "gather", "output");
  else
    requireNoList(outputs, root, "gather", "output");
  return run(c10d::OpType::GATHER, "gather", detailOf(in), outs, opts.timeout,
             [in, outs, dt, root, size](Communicator& c) {
               DenseBuffer src(in);
               const std::size_t n = countOf(in);
               Exchange x(size);
               x.sendCounts[root] = n;
               at::Tensor flat;
               if (!outs.empty()) {
                 for (int i = 0; i < size; ++i) {
                   x.recvCounts[i] = n;
                   x.recvDispls[i] = i * n;
                 }
                 flat = at::empty({size * in.numel()}, in.options());
               } else {
                 flat = at::empty({1}, in.options());  // receives nothing
               }
               x.run(c, src.data(), flat.data_ptr(), dt);
               if (!outs.empty()) unpack(flat, outs);
             });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupTiercc::scatter(std::vector<at::Tensor>& outputs,
                                                           std::vector<std::vector<at::Tensor>>& inputs,
                                                           const c10d::ScatterOptions& opts) {
  const at::Tensor& out = single(outputs, "scatter");
  const DataType dt = dataTypeOf(out, "scatter", Use::Move);
  requireRank(opts.rootRank, getSize(), "scatter", "root");
  const int root = static_cast<int>(opts.rootRank), size = getSize();
  std::vector<at::Tensor> ins;
  if (getRank() == root)
    ins = listLike(inputs, out, size, "scatter", "input");
  else
    requireNoList(inputs, root, "scatter", "input");
  return run(c10d::OpType::SCATTER, "scatter", detailOf(out), {out}, opts.timeout,
             [out, ins, dt, root, size](Communicator& c) {
               DenseBuffer dst(out);
               const std::size_t n = countOf(out);
               Exchange x(size);
               x.recvCounts[root] = n;
               at::Tensor src = ins.empty() ? at::empty({1}, out.options()) : packed(ins);
               if (!ins.empty()) {
                 for (int j = 0; j < size; ++j) {
                   x.sendCounts[j] = n;
                   x.sendDispls[j] = j * n;
                 }
               }
               x.run(c, src.data_ptr(), dst.data(), dt);
               dst.writeBack();
             });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupTiercc::reduce_scatter(std::vector<at::Tensor>& outputs,
                                                                  std::vector<std::vector<at::Tensor>>& inputs,
                                                                  const c10d::ReduceScatterOptions& opts) {
  const at::Tensor& out = single(outputs, "reduce_scatter");
  const DataType dt = dataTypeOf(out, "reduce_scatter", Use::Reduce);
  const ReduceOp op = reduceOpOf(opts.reduceOp, out, "reduce_scatter");
  const std::vector<at::Tensor>& ins = listLike(inputs, out, getSize(), "reduce_scatter", "input");
  return run(c10d::OpType::REDUCE_SCATTER, "reduce_scatter", detailOf(out), {out}, opts.timeout,
             [out, ins, dt, op](Communicator& c) {
               at::Tensor src = backToBack(ins) ? ins[0] : packed(ins);
               DenseBuffer dst(out);
               c.reduceScatter(src.data_ptr(), dst.data(), countOf(out), dt, op);
               dst.writeBack();
             });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupTiercc::_reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                                        const c10d::ReduceScatterOptions& opts) {
  requireCpuDense(input, "reduce_scatter_tensor", "input");
  requireCpuDense(output, "reduce_scatter_tensor", "output");
  requireSameType(output, input, "reduce_scatter_tensor", "output");
  TORCH_CHECK(input.numel() == output.numel() * getSize(), "tiercc reduce_scatter_tensor: the input has ",
              input.numel(), " elements; it needs ", getSize(), " x ", output.numel());
  const DataType dt = dataTypeOf(output, "reduce_scatter_tensor", Use::Reduce);
  const ReduceOp op = reduceOpOf(opts.reduceOp, output, "reduce_scatter_tensor");
  return run(c10d::OpType::_REDUCE_SCATTER_BASE, "reduce_scatter_tensor", detailOf(output), {output},
             opts.timeout, [in = input, out = output, dt, op](Communicator& c) {
               DenseBuffer src(in), dst(out);
               c.reduceScatter(src.data(), dst.data(), countOf(out), dt, op);
               dst.writeBack();
             });
}

// all_to_all_single: even splits are tiercc's all-to-all, given split sizes (rows of dim 0) its
// all-to-allv.
c10::intrusive_ptr<c10d::Work> ProcessGroupTiercc::alltoall_base(at::Tensor& output, at::Tensor& input,
                                                                 std::vector<int64_t>& outputSplitSizes,
                                                                 std::vector<int64_t>& inputSplitSizes,
                                                                 const c10d::AllToAllOptions& opts) {
  const char* name = "all_to_all_single";
  requireCpuDense(input, name, "input");
  requireCpuDense(output, name, "output");
  requireSameType(output, input, name, "output");
  const DataType dt = dataTypeOf(input, name, Use::Move);
  const int size = getSize();
  // Elements per row of dim 0, in tiercc elements.
  auto rowOf = [](const at::Tensor& t) -> std::size_t {
    return t.dim() == 0 || t.size(0) == 0 ? 0 : countOf(t) / static_cast<std::size_t>(t.size(0));
  };
  auto countsOf = [&](const at::Tensor& t, const std::vector<int64_t>& splits, const char* role) {
    std::vector<std::size_t> counts(size);
    if (splits.empty()) {
      TORCH_CHECK(t.dim() > 0 && t.size(0) % size == 0, "tiercc ", name, ": the ", role, " has ",
                  t.dim() > 0 ? t.size(0) : 0, " rows, which ", size, " ranks cannot split evenly");
      for (auto& n : counts) n = static_cast<std::size_t>(t.size(0) / size) * rowOf(t);
      return counts;
    }
    TORCH_CHECK(splits.size() == static_cast<std::size_t>(size), "tiercc ", name, ": ", role, " split sizes need ",
                size, " entries, got ", splits.size());
    std::int64_t rows = 0;
    for (int i = 0; i < size; ++i) {
      TORCH_CHECK(splits[i] >= 0, "tiercc ", name, ": ", role, " split size ", splits[i], " is negative");
      rows += splits[i];
      counts[i] = static_cast<std::size_t>(splits[i]) * rowOf(t);
    }
    TORCH_CHECK(t.dim() > 0 && rows == t.size(0), "tiercc ", name, ": ", role, " split sizes add up to ", rows,
                " rows, the tensor has ", t.dim() > 0 ? t.size(0) : 0);
    return counts;
  };
  Exchange x(size);
  x.sendCounts = countsOf(input, inputSplitSizes, "input");
  x.recvCounts = countsOf(output, outputSplitSizes, "output");
  offsets(x.sendCounts, x.sendDispls);
  offsets(x.recvCounts, x.recvDispls);
  const bool even = inputSplitSizes.empty() && outputSplitSizes.empty();
  TORCH_CHECK(!even || input.numel() == output.numel(), "tiercc ", name, ": the input has ", input.numel(),
              " elements and the output ", output.numel(), "; even splits need them equal");
  return run(c10d::OpType::ALLTOALL_BASE, name, detailOf(input), {output}, opts.timeout,
             [in = input, out = output, x, dt, even, size](Communicator& c) {
               DenseBuffer src(in), dst(out);
               if (even)
                 c.alltoall(src.data(), dst.data(), countOf(in) / size, dt);
               else
                 x.run(c, src.data(), dst.data(), dt);
               dst.writeBack();
             });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupTiercc::alltoall(std::vector<at::Tensor>& outputs,
                                                            std::vector<at::Tensor>& inputs,
                                                            const c10d::AllToAllOptions& opts) {
  const int size = getSize();
  TORCH_CHECK(inputs.size() == static_cast<std::size_t>(size) && outputs.size() == static_cast<std::size_t>(size),
              "tiercc all_to_all: needs ", size, " input and ", size, " output tensors, got ", inputs.size(), " and ",
              outputs.size());
  for (int i = 0; i < size; ++i) {
    requireCpuDense(inputs[i], "all_to_all", "input");
    requireCpuDense(outputs[i], "all_to_all", "output");
    requireSameType(inputs[i], inputs[0], "all_to_all", "every input");
    requireSameType(outputs[i], inputs[0], "all_to_all", "output");
  }
  const DataType dt = dataTypeOf(inputs[0], "all_to_all", Use::Move);
  Exchange x(size);
  for (int i = 0; i < size; ++i) {
    x.sendCounts[i] = countOf(inputs[i]);
    x.recvCounts[i] = countOf(outputs[i]);
  }
  offsets(x.sendCounts, x.sendDispls);
  offsets(x.recvCounts, x.recvDispls);
  return run(c10d::OpType::ALLTOALL, "all_to_all", c10::str(inputs[0].scalar_type(), ", ", totalElements(inputs),
                                                            " elements"),
             outputs, opts.timeout, [ins = inputs, outs = outputs, x, dt](Communicator& c) {
               at::Tensor src = packed(ins);
               const bool direct = backToBack(outs);
               at::Tensor dst = direct ? outs[0] : at::empty({totalElements(outs)}, ins[0].options());
               x.run(c, src.data_ptr(), dst.data_ptr(), dt);
               if (!direct) unpack(dst, outs);
             });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupTiercc::send(std::vector<at::Tensor>& tensors, int dstRank, int tag) {
  return pointToPoint(true, tensors, dstRank, tag);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupTiercc::recv(std::vector<at::Tensor>& tensors, int srcRank, int tag) {
  return pointToPoint(false, tensors, srcRank, tag);
}

// tiercc matches sends and receives in order per pair of ranks, and runs them one at a time: a
// send waits for its receive. Outside a batch they run in issue order; two ranks that both send
// before they receive wait on each other until the deadline (use batch_isend_irecv).
c10::intrusive_ptr<c10d::Work> ProcessGroupTiercc::pointToPoint(bool isSend, std::vector<at::Tensor>& tensors,
                                                                int peer, int tag) {
  const char* name = isSend ? "send" : "recv";
  const at::Tensor& t = single(tensors, name);
  const DataType dt = dataTypeOf(t, name, Use::Move);
  requireRank(peer, getSize(), name, isSend ? "destination" : "source");
  TORCH_CHECK(peer != getRank(), "tiercc ", name, ": rank ", peer, " cannot ", name, " to or from itself");
  TORCH_CHECK(tag == 0, "tiercc ", name, ": tag ", tag,
              " is not supported: tiercc matches sends and receives in order per pair of ranks (use tag 0)");
  {
    std::lock_guard<std::mutex> lock(issueMutex_);
    if (batching_) {
      const std::string what =
          c10::str(name, " (", detailOf(t), isSend ? " to rank " : " from rank ", peer, ", batched)");
      auto work = c10::make_intrusive<TierccWork>(getRank(), isSend ? c10d::OpType::SEND : c10d::OpType::RECV, what,
                                                  std::vector<at::Tensor>{t}, [](const std::string&) {});
      batch_.push_back({isSend, t, dt, peer, work});
      return work;
    }
  }
  return run(isSend ? c10d::OpType::SEND : c10d::OpType::RECV, name,
             c10::str(detailOf(t), isSend ? " to rank " : " from rank ", peer), {t}, kGroupTimeout,
             [isSend, t, dt, peer](Communicator& c) {
               DenseBuffer b(t);
               if (isSend) {
                 c.send(b.data(), countOf(t), dt, peer);
               } else {
                 c.recv(b.data(), countOf(t), dt, peer);
                 b.writeBack();
               }
             });
}

void ProcessGroupTiercc::startCoalescing() {
  std::lock_guard<std::mutex> lock(issueMutex_);
  TORCH_CHECK(!batching_, "tiercc: a batch of sends and receives is already open");
  batching_ = true;
}

void ProcessGroupTiercc::endCoalescing(std::vector<c10::intrusive_ptr<c10d::Work>>& /*works: ours, in batch_*/) {
  std::vector<PointToPoint> batch;
  {
    std::lock_guard<std::mutex> lock(issueMutex_);
    batching_ = false;
    batch.swap(batch_);
  }
  if (!batch.empty()) runBatch(std::move(batch));
}

// The batch runs pair by pair, in one order every rank agrees on: by (lower rank, higher rank),
// and inside a pair the lower rank sends first while the higher one receives first. The pair
// that comes first among those still pending is first on both of its ranks, so someone always
// makes progress: no cycle of ranks waiting on each other, whatever order each rank listed.
// Sends (and receives) to one peer keep their order, which is how they are matched.
void ProcessGroupTiercc::runBatch(std::vector<PointToPoint> batch) {
  const int me = getRank();
  std::stable_sort(batch.begin(), batch.end(), [me](const PointToPoint& a, const PointToPoint& b) {
    if (a.peer != b.peer) return a.peer < b.peer;  // (min, max) of a pair orders like the peer, for one rank
    const bool aFirst = (me < a.peer) == a.isSend;  // lower rank: sends first; higher: receives first
    const bool bFirst = (me < b.peer) == b.isSend;
    return aFirst && !bFirst;
  });
  std::string detail = c10::str(batch.size(), " sends and receives");
  run(c10d::OpType::UNKNOWN, "batch_isend_irecv", detail, {}, kGroupTimeout, [batch](Communicator& c) {
    std::size_t done = 0;
    try {
      for (; done < batch.size(); ++done) {
        const PointToPoint& p = batch[done];
        DenseBuffer b(p.tensor);
        if (p.isSend) {
          c.send(b.data(), countOf(p.tensor), p.dt, p.peer);
        } else {
          c.recv(b.data(), countOf(p.tensor), p.dt, p.peer);
          b.writeBack();
        }
        static_cast<TierccWork&>(*p.work).complete(nullptr);
      }
    } catch (const std::exception& e) {
      for (std::size_t i = done; i < batch.size(); ++i)
        static_cast<TierccWork&>(*batch[i].work)
            .complete(std::make_exception_ptr(std::runtime_error(
                c10::str("tiercc ", static_cast<TierccWork&>(*batch[i].work).what(), ": ", e.what()))));
      throw;
    }
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupTiercc::barrier(const c10d::BarrierOptions& opts) {
  return run(c10d::OpType::BARRIER, "barrier", "no data", {}, opts.timeout, [](Communicator& c) { c.barrier(); });
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
