// Point to point for ProcessGroupTiercc: send, recv, and batch_isend_irecv's batches.
#include <algorithm>

#include <ATen/ATen.h>
#include <c10/util/Exception.h>
#include <c10/util/StringUtil.h>

#include "python/src/process_group.hpp"
#include "python/src/tensor_args.hpp"
#include "python/src/tensor_types.hpp"
#include "python/src/work.hpp"

namespace tiercc::torch {

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
             c10::str(detailOf(t), isSend ? " to rank " : " from rank ", peer), {t}, c10d::kUnsetTimeout,
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
  run(c10d::OpType::UNKNOWN, "batch_isend_irecv", detail, {}, c10d::kUnsetTimeout, [batch](Communicator& c) {
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

}  // namespace tiercc::torch
