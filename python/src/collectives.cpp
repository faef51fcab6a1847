// The collectives of ProcessGroupTiercc: each checks its tensors on the caller's thread, then
// queues one body that runs tiercc's call on dense buffers.
#include <ATen/ATen.h>
#include <c10/util/Exception.h>
#include <c10/util/StringUtil.h>

#include "python/src/process_group.hpp"
#include "python/src/tensor_args.hpp"
#include "python/src/tensor_types.hpp"

namespace tiercc::torch {

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

c10::intrusive_ptr<c10d::Work> ProcessGroupTiercc::barrier(const c10d::BarrierOptions& opts) {
  return run(c10d::OpType::BARRIER, "barrier", "no data", {}, opts.timeout, [](Communicator& c) { c.barrier(); });
}

}  // namespace tiercc::torch
