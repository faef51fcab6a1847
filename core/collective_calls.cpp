// The public collectives: validate arguments (bad input changes nothing), then run the
// algorithm in order with the communicator's other operations.
#include <cstdint>
#include <cstring>

#include "core/communicator_impl.hpp"
#include "core/errors.hpp"
#include "core/log.hpp"

namespace tiercc {
namespace {

void requireType(DataType dt) {
  int v = static_cast<int>(dt);
  TIERCC_REQUIRE_ARG(v >= 0 && v < kNumDataTypes, "unknown datatype ", v, " (valid: 0..", kNumDataTypes - 1, ")");
}

void requireOp(ReduceOp op) {
  int v = static_cast<int>(op);
  TIERCC_REQUIRE_ARG(v >= 0 && v < kNumReduceOps, "unknown reduction op ", v, " (valid: 0..", kNumReduceOps - 1, ")");
}

/// Bytes of `count` elements times `factor`, or InvalidArgument if that overflows.
std::size_t byteSize(const char* name, std::size_t count, DataType dt, std::size_t factor = 1) {
  std::size_t es = dataTypeSize(dt);
  TIERCC_REQUIRE_ARG(count <= SIZE_MAX / es / factor, name, ": count ", count, " of ", toString(dt),
                     " overflows the address space");
  return count * es * factor;
}

/// Null buffers (for non-empty data) and partially overlapping send/recv are rejected.
void requireBuffers(const char* name, const void* send, std::size_t sendBytes, const void* recv,
                    std::size_t recvBytes) {
  TIERCC_REQUIRE_ARG(sendBytes == 0 || send, name, ": send buffer is null");
  TIERCC_REQUIRE_ARG(recvBytes == 0 || recv, name, ": receive buffer is null");
  if (send == recv || !sendBytes || !recvBytes) return;
  auto s = reinterpret_cast<std::uintptr_t>(send), r = reinterpret_cast<std::uintptr_t>(recv);
  TIERCC_REQUIRE_ARG(s + sendBytes <= r || r + recvBytes <= s, name,
                     ": send and receive buffers overlap without being the same (in place means send == recv)");
}

[[noreturn]] void notYet(const char* name) {
  fail(ErrorCode::NotSupported, name,
       " is not supported yet: this build has allreduce and barrier; the other collectives come "
       "with the hierarchical-collectives work");
}

}  // namespace

void Communicator::Impl::execute(const char* name, std::uint64_t seq,
                                 const std::function<void(CollContext&)>& body) {
  if (aborted_.load()) fail(ErrorCode::Aborted, name, " #", seq, ": the communicator was aborted");
  {
    std::lock_guard<std::mutex> lock(statsMutex_);
    if (brokenBy_) std::rethrow_exception(brokenBy_);
  }
  TierStats delta;
  CollContext ctx{topo_, *domain_, transport_.get(), scratch_, epoch_, delta, seq,
                  concat(name, " #", seq), Deadline::after(timeout_)};
  TIERCC_LOG(Trace, Coll) << ctx.what << " start";
  try {
    body(ctx);
  } catch (const Error& e) {
    failed(e);
    throw;
  }
  std::lock_guard<std::mutex> lock(statsMutex_);
  stats_.collectives += 1;
  stats_.scaleUpBytes += delta.scaleUpBytes;
  stats_.scaleOutBytes += delta.scaleOutBytes;
  stats_.scaleOutBoundBytes += delta.scaleOutBoundBytes;
}

// A failed collective leaves the tiers mid-protocol: the communicator stops (later calls get
// the same error) and tells its peers, so that they fail now rather than at their deadline.
void Communicator::Impl::failed(const Error& e) {
  {
    std::lock_guard<std::mutex> lock(statsMutex_);
    if (!brokenBy_) brokenBy_ = std::make_exception_ptr(e);
  }
  TIERCC_LOG(Warn, Coll) << e.what();
  domain_->poison(e.what());
  if (transport_) transport_->abort();
}

void Communicator::Impl::runBlocking(const char* name, std::function<void(CollContext&)> body) {
  if (aborted_.load()) fail(ErrorCode::Aborted, name, ": the communicator was aborted");
  std::uint64_t seq = nextSeq_++;
  queue_.runInline([&] { execute(name, seq, body); });
}

Work Communicator::Impl::runAsync(const char* name, std::function<void(CollContext&)> body) {
  if (aborted_.load()) fail(ErrorCode::Aborted, name, ": the communicator was aborted");
  std::uint64_t seq = nextSeq_++;
  return queue_.submit([this, name, seq, body = std::move(body)] { execute(name, seq, body); });
}

// ---- public API --------------------------------------------------------------------------

namespace {

Communicator::Impl& live(const std::unique_ptr<Communicator::Impl>& impl) {
  if (!impl) fail(ErrorCode::InvalidArgument, "operation on an empty communicator (moved from, or split with a negative color)");
  return *impl;
}

std::function<void(CollContext&)> allreduceBody(Communicator::Impl& c, const void* send, void* recv,
                                                std::size_t count, DataType dt, ReduceOp op) {
  requireType(dt);
  requireOp(op);
  std::size_t bytes = byteSize("allreduce", count, dt);
  requireBuffers("allreduce", send, bytes, recv, bytes);
  (void)c;
  return [=](CollContext& ctx) { allreduceHierarchical(ctx, send, recv, count, dt, op); };
}

std::function<void(CollContext&)> barrierBody() {
  return [](CollContext& ctx) {
    std::uint8_t token = 1, sum = 0;
    allreduceHierarchical(ctx, &token, &sum, 1, DataType::U8, ReduceOp::Max);
  };
}

}  // namespace

void Communicator::allreduce(const void* send, void* recv, std::size_t count, DataType dt, ReduceOp op) {
  Impl& c = live(impl_);
  c.runBlocking("allreduce", allreduceBody(c, send, recv, count, dt, op));
}

Work Communicator::allreduceAsync(const void* send, void* recv, std::size_t count, DataType dt, ReduceOp op) {
  Impl& c = live(impl_);
  return c.runAsync("allreduce", allreduceBody(c, send, recv, count, dt, op));
}

void Communicator::barrier() { live(impl_).runBlocking("barrier", barrierBody()); }
Work Communicator::barrierAsync() { return live(impl_).runAsync("barrier", barrierBody()); }

void Communicator::reduceScatter(const void*, void*, std::size_t, DataType, ReduceOp) { live(impl_); notYet("reduce_scatter"); }
void Communicator::allgather(const void*, void*, std::size_t, DataType) { live(impl_); notYet("allgather"); }
void Communicator::broadcast(const void*, void*, std::size_t, DataType, int) { live(impl_); notYet("broadcast"); }
void Communicator::reduce(const void*, void*, std::size_t, DataType, ReduceOp, int) { live(impl_); notYet("reduce"); }
void Communicator::alltoall(const void*, void*, std::size_t, DataType) { live(impl_); notYet("alltoall"); }
void Communicator::send(const void*, std::size_t, DataType, int) { live(impl_); notYet("send"); }
void Communicator::recv(void*, std::size_t, DataType, int) { live(impl_); notYet("recv"); }
Work Communicator::reduceScatterAsync(const void*, void*, std::size_t, DataType, ReduceOp) { live(impl_); notYet("reduce_scatter"); }
Work Communicator::allgatherAsync(const void*, void*, std::size_t, DataType) { live(impl_); notYet("allgather"); }
Work Communicator::broadcastAsync(const void*, void*, std::size_t, DataType, int) { live(impl_); notYet("broadcast"); }
Work Communicator::reduceAsync(const void*, void*, std::size_t, DataType, ReduceOp, int) { live(impl_); notYet("reduce"); }
Work Communicator::alltoallAsync(const void*, void*, std::size_t, DataType) { live(impl_); notYet("alltoall"); }

}  // namespace tiercc
