// ProcessGroupTiercc: the c10d backend "tiercc". Each operation is checked on the caller's thread
// (bad input raises there and changes nothing), then runs on the group's worker, in issue order,
// through one tiercc::Communicator that met its peers through the c10d store torch handed in.
#pragma once

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <tiercc/tiercc.hpp>

namespace tiercc::torch {

class ProcessGroupTiercc final : public c10d::ProcessGroup {
 public:
  /// Collective over the ranks of the group: builds the communicator (collective, blocking).
  /// `timeout` bounds each operation that gives none of its own.
  ProcessGroupTiercc(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                     std::chrono::milliseconds timeout);
  ~ProcessGroupTiercc() override;

  const std::string getBackendName() const override { return "tiercc"; }

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                           const c10d::BroadcastOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                           const c10d::AllreduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                                     const c10d::AllreduceCoalescedOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor>& tensors, const c10d::ReduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                           std::vector<at::Tensor>& inputs,
                                           const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor& output, at::Tensor& input,
                                                 const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather_coalesced(std::vector<std::vector<at::Tensor>>& outputLists,
                                                     std::vector<at::Tensor>& inputs,
                                                     const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>>& outputs,
                                        std::vector<at::Tensor>& inputs, const c10d::GatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor>& outputs,
                                         std::vector<std::vector<at::Tensor>>& inputs,
                                         const c10d::ScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(std::vector<at::Tensor>& outputs,
                                                std::vector<std::vector<at::Tensor>>& inputs,
                                                const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                      const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor& output, at::Tensor& input,
                                               std::vector<int64_t>& outputSplitSizes,
                                               std::vector<int64_t>& inputSplitSizes,
                                               const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
                                          const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors, int dstRank, int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors, int srcRank, int tag) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& opts) override;

  /// batch_isend_irecv brackets its sends and receives with these: the batch runs as one
  /// operation, in an order that cannot deadlock (see runBatch) however the ranks listed theirs.
  void startCoalescing() override;
  void endCoalescing(std::vector<c10::intrusive_ptr<c10d::Work>>& works) override;

  /// A tensor in memory that every rank of this rank's domain maps (Communicator::allocShared):
  /// collectives on it inside the domain copy nothing through staging. Collective over the
  /// group, like the allocation; freed (in order with the operations) when the tensor dies.
  at::Tensor emptyShared(const std::vector<int64_t>& sizes, at::ScalarType type);
  /// "rank 3 of 4, domain 1 of 2 (2 ranks), scale-out tcp".
  std::string describe() const;
  TierStats stats() const;

  struct Core;

 private:
  using Body = std::function<void(Communicator&)>;
  /// Queues body as one operation; its Work completes with `outputs` or with the error.
  c10::intrusive_ptr<c10d::Work> run(c10d::OpType type, const char* name, const std::string& detail,
                                     std::vector<at::Tensor> outputs, std::chrono::milliseconds opTimeout,
                                     Body body);

  /// One send or receive of a batch.
  struct PointToPoint {
    bool isSend;
    at::Tensor tensor;
    DataType dt;
    int peer;
    c10::intrusive_ptr<c10d::Work> work;
  };
  c10::intrusive_ptr<c10d::Work> pointToPoint(bool isSend, std::vector<at::Tensor>& tensors, int peer, int tag);
  void runBatch(std::vector<PointToPoint> batch);

  std::shared_ptr<Core> core_;
  std::mutex issueMutex_;  // batching_ and batch_: torch may call from several threads
  bool batching_ = false;
  std::vector<PointToPoint> batch_;  // shared with tensors from emptyShared, which may outlive the group
  std::string where_;  // describe(), for error messages
  const std::chrono::milliseconds timeout_;
};

}  // namespace tiercc::torch
