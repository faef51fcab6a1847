// The public collectives: validate arguments (bad input changes nothing), then run the
// algorithm in order with the communicator's other operations.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <thread>

#include "bootstrap/failure_detector.hpp"
#include "bootstrap/failure_verdict.hpp"
#include "core/cycle_clock.hpp"
#include "core/errors.hpp"
#include "core/log.hpp"
#include "exec/executor.hpp"
#include "runtime/communicator_impl.hpp"
#include "runtime/hang_diagnosis.hpp"

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

/// Null buffers (for non-empty data) and overlapping send/recv are rejected, except the exact
/// in-place form of the collective: send == inPlaceSend (NCCL's definitions).
void requireBuffers(const char* name, const void* send, std::size_t sendBytes, const void* recv, std::size_t recvBytes,
                    const void* inPlaceSend) {
  TIERCC_REQUIRE_ARG(sendBytes == 0 || send, name, ": send buffer is null");
  TIERCC_REQUIRE_ARG(recvBytes == 0 || recv, name, ": receive buffer is null");
  if (!sendBytes || !recvBytes || send == inPlaceSend) return;
  auto s = reinterpret_cast<std::uintptr_t>(send), r = reinterpret_cast<std::uintptr_t>(recv);
  TIERCC_REQUIRE_ARG(s + sendBytes <= r || r + recvBytes <= s, name,
                     ": send and receive buffers overlap without being the in-place form of this collective");
}

void requireRank(const char* name, const char* what, int rank, int size) {
  TIERCC_REQUIRE_ARG(rank >= 0 && rank < size, name, ": ", what, " ", rank, " is not in [0, ", size, ")");
}

}  // namespace

Request Communicator::Impl::requestFor(const CallArgs& a) const {
  Request req;
  req.coll = a.coll;
  req.count = a.count;
  req.dt = a.dt;
  req.root = a.root;
  req.peer = a.peer;
  req.radix = knomialRadix_;
  req.slots = pipelineSlots_;
  req.windowBytes = windowBytes_;
  req.railMessageBytes = railMessageBytes_;
  switch (a.coll) {
    case Collective::AllToAllv:
      // Every rank must be asked the same: the job's shape, not the counts, which differ per rank.
      req.count = 0;
      break;
    case Collective::Barrier:
      req.dt = DataType::U8;
      break;
    case Collective::Send:
    case Collective::Recv:
      req.root = topo_.rank();
      break;
    default:
      break;
  }
  return req;
}

// What every operation goes through: the flight recorder and the metrics hear how it ended.
// `queuedAt` 0: the call was not queued (it runs as it is issued). One cycle-clock read at each
// end serves the recorder and the latency histogram.
void Communicator::Impl::execute(const char* name, std::uint64_t seq, std::uint64_t queuedAt, const CallArgs& args) {
  const std::uint64_t begun = cycles::now();
  const std::int64_t traceBegun = trace_ ? StepTrace::now() : 0;  // the clock the steps' spans use
  const std::uint64_t recordId = recorder_->began(seq, args, queuedAt ? queuedAt : begun, begun);
  try {
    executeCall(name, seq, args);
  } catch (const Error& e) {
    const std::uint64_t ended = cycles::now();
    recorder_->ended(recordId, false, ended);
    if (trace_) traceCall(name, seq, args, traceBegun, false);
    std::lock_guard<BiasedMutex> lock(statsMutex_);
    metrics_.failed(e.code());
    throw;
  }
  const std::uint64_t ended = cycles::now();
  recorder_->ended(recordId, true, ended);
  if (trace_) traceCall(name, seq, args, traceBegun, true);
  record(callStats_, args.coll, ended - begun);
}

void Communicator::Impl::traceCall(const char* name, std::uint64_t seq, const CallArgs& args, std::int64_t begunNs,
                                   bool ok) {
  trace_->call(name, seq, args, recorder_->live().plan.load(std::memory_order_relaxed), begunNs, StepTrace::now(), ok);
}

void Communicator::Impl::executeCall(const char* name, std::uint64_t seq, const CallArgs& args) {
  if (aborted_.load()) fail(ErrorCode::Aborted, name, " #", seq, ": the communicator was aborted");
  if (broken_.load(std::memory_order_acquire)) {
    std::lock_guard<BiasedMutex> lock(statsMutex_);
    std::rethrow_exception(brokenBy_);
  }
  // Operations run one at a time (the queue's exec lock): the name's buffer is reused.
  char digits[24];
  const auto printed = std::to_chars(digits, digits + sizeof(digits), seq);
  callName_.assign(name).append(" #").append(digits, printed.ptr);
  callStats_.scaleOutBoundBytes = 0;
  ExecContext ctx{topo_,
                  *domain_,
                  transport_.get(),
                  scratch_,
                  epoch_,
                  callStats_,
                  seq,
                  callName_,
                  Deadline::afterCoarse(timeout_),
                  scaleUpLink_.get(),
                  scaleOutLink_.get(),
                  timeout_};
  ctx.live = &recorder_->live();
  if (fault_) ctx.fault = &*fault_;
  if (trace_) ctx.trace = &trace_->steps();
  TIERCC_LOG(Trace, Coll) << ctx.what << " start";
  try {
    run(ctx, args);
  } catch (const AgreedError& e) {
    failed(e, true);
    throw;
  } catch (const Error& e) {
    // A timeout, or a mismatch a transport saw, may be another rank's doing: the ranks' progress
    // says whose (a peer that failed is named by the failure itself).
    const bool collective = args.coll != Collective::Send && args.coll != Collective::Recv;
    const bool diagnose =
        (e.code() == ErrorCode::Timeout || e.code() == ErrorCode::InvalidArgument) && collective && !broken_.load();
    failed(diagnose ? withDiagnosis(e, seq, args) : e);
    // A wait woken by the failure detector reports the rank it declared failed.
    std::lock_guard<BiasedMutex> lock(statsMutex_);
    std::rethrow_exception(brokenBy_);
  } catch (const std::exception& e) {
    // Operations may be posted that reference this collective's stack: stop the tiers.
    Error wrapped(ErrorCode::Internal, ctx.what + ": " + e.what());
    failed(wrapped);
    throw wrapped;
  }
}

void Communicator::Impl::run(ExecContext& ctx, const CallArgs& args) {
  // A barrier is a one-byte allreduce (or empty messages): its token lives here.
  std::uint8_t token = 1, result = 0;
  CallArgs barrier;
  const CallArgs* call = &args;
  if (args.coll == Collective::Barrier) {
    barrier = args;
    barrier.send = &token;
    barrier.recv = &result;
    barrier.count = 1;
    barrier.dt = DataType::U8;
    barrier.op = ReduceOp::Max;
    call = &barrier;
  }
  const Choice& choice = selector_->choose(requestFor(args), symmetric_ && symmetric_->liveAllocations() > 0);
  tiercc::execute(ctx, exec_, choice, *call);
}

void Communicator::Impl::record(const CallStats& call, Collective coll, std::uint64_t ticks) {
  const Plan& plan = *call.plan;
  // The tick rate, measured again now and then: reading it costs two clock reads.
  if ((recorded_++ & 4095) == 0) secondsPerTick_ = cycles::secondsPerTick();
  BiasedMutex::BiasedGuard lock(statsMutex_);  // under the exec gate: one call records at a time
  metrics_.called(coll, plan.algorithm, plan.bytes, static_cast<double>(ticks) * secondsPerTick_);
  totals_.collectives += 1;
  totals_.scaleOutBoundBytes += call.scaleOutBoundBytes;
  metrics_.scaleOutBoundBytes += call.scaleOutBoundBytes;
  totals_.algorithm = plan.algorithm;
  totals_.path = plan.path;
  totals_.lastSteps.resize(plan.steps.size());  // the same size call after call: no allocation
  for (std::size_t i = 0; i < plan.steps.size(); ++i) {
    const StepCount& n = call.steps[i];
    totals_.scaleUpBytes += n.scaleUpBytes;
    totals_.scaleOutBytes += n.scaleOutBytes;
    metrics_.scaleUpBytes += n.scaleUpBytes;
    metrics_.scaleOutBytes += n.scaleOutBytes;
    totals_.lastSteps[i] = {plan.steps[i].kind, plan.steps[i].tier, n};
  }
}

// A failed collective leaves the tiers mid-protocol: the communicator stops (later calls get
// the same error) and tells its peers, so that they fail now rather than at their deadline.
void Communicator::Impl::failed(const Error& e, bool agreed) {
  // The first failure is the one to report; a rank that fails because a peer stopped reports
  // the verdict of the rank that failed first (failure_verdict.hpp).
  const bool first = !broken_.load(std::memory_order_acquire);
  const Error stated = first && !agreed ? withRootCause(e) : e;
  std::string reason = stated.what();
  {
    std::lock_guard<BiasedMutex> lock(statsMutex_);
    if (!brokenBy_) brokenBy_ = std::make_exception_ptr(stated);
    broken_.store(true, std::memory_order_release);
    try {
      std::rethrow_exception(brokenBy_);
    } catch (const Error& firstError) {
      reason = firstError.what();  // peers hear the root cause, not the wake-up it caused here
    }
  }
  TIERCC_LOG(Warn, Coll) << reason;
  domain_->poison(reason);
  if (transport_) transport_->abort();
  if (first) dumpFlightRecorder(stated.what());
  countStopped();
}

Error Communicator::Impl::withDiagnosis(const Error& timeout, std::uint64_t seq, const CallArgs& args) const {
  if (!detector_) return timeout;  // nobody publishes progress
  // After a timeout every rank's beats are seconds newer than the calls they describe. A mismatch
  // shows within microseconds of the peers' calls: wait one beat, so that theirs are in the store.
  if (timeout.code() != ErrorCode::Timeout)
    std::this_thread::sleep_for(heartbeatPeriod_ + std::chrono::milliseconds(50));
  std::vector<std::optional<Progress>> all(topo_.size());
  try {
    for (int r = 0; r < topo_.size(); ++r) {
      if (r == topo_.rank()) {
        all[r] = recorder_->progress();
        continue;
      }
      const std::string key = FailureDetector::beatKey(r);
      if (!quickStore_->check({key})) continue;
      const std::string beat = quickStore_->getString(key, Deadline::after(std::chrono::seconds(1)));
      if (FailureDetector::beatCount(beat) >= 0)
        all[r] = Progress::decode(FailureDetector::beatStatus(beat));
      else
        all[r] = Progress::left();
    }
  } catch (const std::exception& storeError) {
    TIERCC_LOG(Warn, Coll) << "no hang diagnosis: the ranks' progress could not be read (" << storeError.what() << ")";
    return timeout;
  }
  bool callsDiffer = false;
  const std::string diagnosis =
      diagnoseHang(topo_, static_cast<std::int64_t>(seq), signatureOf(args), all, wallClockMs(), &callsDiffer);
  if (diagnosis.empty()) return timeout;
  // Ranks that called different things is the caller's error, however it showed (a timeout:
  // two roots that both only send), and every rank reports it so (the verdict's mark).
  return Error(callsDiffer ? ErrorCode::InvalidArgument : timeout.code(), concat(timeout.what(), "; ", diagnosis));
}

Error Communicator::Impl::withRootCause(const Error& local) const {
  const ErrorCode code = local.code();
  if (code != ErrorCode::PeerFailure && code != ErrorCode::TransportError && code != ErrorCode::Timeout &&
      code != ErrorCode::InvalidArgument)  // raised inside a collective: the ranks' calls differ
    return local;
  const std::string mine = concat(code == ErrorCode::InvalidArgument ? kCallsDifferMark : "", "first seen by ",
                                  topo_.nameRank(topo_.rank()), ": ", local.what());
  try {
    verdictOwn_ = true;  // until the store says another rank was first
    Store& store = quickStore_ ? *quickStore_ : *store_;
    const std::string verdict = agreeOnFailureVerdict(store, mine, Deadline::after(std::chrono::seconds(2)));
    verdictOwn_ = verdict == mine;
    if (verdict == mine) return local;
    // What this rank saw (a peer that stopped) is the messenger: a caller's error stays one.
    return Error(callsDiffer(verdict) ? ErrorCode::InvalidArgument : code,
                 concat(local.what(), " [root cause, ", verdict, "]"));
  } catch (const std::exception& storeError) {
    // The store is gone or stalled: what failed is most likely whoever hosts it.
    TIERCC_LOG(Warn, Coll) << "no failure verdict from the store (" << storeError.what() << ")";
    if (storeHostRank_ < 0 || storeHostRank_ == topo_.rank()) return local;
    return Error(code, concat(local.what(), " [root cause, probably ", storeHostName(),
                              ": it did not answer (", storeError.what(), ")]"));
  }
}

// Point-to-point operations do not take a collective sequence number (only two ranks see
// them); each (direction, peer) pair numbers its own messages.
void Communicator::Impl::runPointToPoint(const CallArgs& args) {
  const bool isSend = args.coll == Collective::Send;
  if (aborted_.load()) fail(ErrorCode::Aborted, isSend ? "send" : "recv", ": the communicator was aborted");
  std::uint64_t pairSeq = (isSend ? sendSeq_ : recvSeq_)[args.peer]++;
  std::string name = concat(isSend ? "send to rank " : "recv from rank ", args.peer);
  queue_.runInline([&] { execute(name.c_str(), pairSeq, 0, args); });
}

void Communicator::Impl::runBlocking(const char* name, const CallArgs& args) {
  if (aborted_.load()) fail(ErrorCode::Aborted, name, ": the communicator was aborted");
  std::uint64_t seq = nextSeq_++;
  queue_.runInline([&] { execute(name, seq, 0, args); });
}

Work Communicator::Impl::runAsync(const char* name, std::shared_ptr<const OwnedCall> call) {
  if (aborted_.load()) fail(ErrorCode::Aborted, name, ": the communicator was aborted");
  std::uint64_t seq = nextSeq_++;
  const QueuedCall queued{seq, signatureOf(call->args), -1, cycles::now()};
  return queue_.submit(
      [this, name, seq, at = queued.queuedAt, call = std::move(call)] { execute(name, seq, at, call->args); }, queued);
}

// ---- public API --------------------------------------------------------------------------

namespace {

Communicator::Impl& live(const std::unique_ptr<Communicator::Impl>& impl) {
  return Communicator::Impl::live(impl, "operation");
}

// base + delta bytes as an address to compare with, never dereferenced.
const void* shifted(const void* base, std::ptrdiff_t delta) {
  return reinterpret_cast<const void*>(reinterpret_cast<std::uintptr_t>(base) + delta);
}

CallArgs allreduceArgs(const void* send, void* recv, std::size_t count, DataType dt, ReduceOp op) {
  requireType(dt);
  requireOp(op);
  std::size_t bytes = byteSize("allreduce", count, dt);
  requireBuffers("allreduce", send, bytes, recv, bytes, recv);
  return {Collective::AllReduce, send, recv, count, dt, op};
}

CallArgs reduceScatterArgs(int rank, int size, const void* send, void* recv, std::size_t recvCount, DataType dt,
                           ReduceOp op) {
  requireType(dt);
  requireOp(op);
  std::size_t recvBytes = byteSize("reduce_scatter", recvCount, dt);
  std::size_t sendBytes = byteSize("reduce_scatter", recvCount, dt, size);
  // In place: recv == send + rank x recvCount.
  requireBuffers("reduce_scatter", send, sendBytes, recv, recvBytes,
                 shifted(recv, -static_cast<std::ptrdiff_t>(rank * recvBytes)));
  return {Collective::ReduceScatter, send, recv, recvCount, dt, op};
}

CallArgs allgatherArgs(int rank, int size, const void* send, void* recv, std::size_t sendCount, DataType dt) {
  requireType(dt);
  std::size_t sendBytes = byteSize("allgather", sendCount, dt);
  std::size_t recvBytes = byteSize("allgather", sendCount, dt, size);
  // In place: send == recv + rank x sendCount.
  requireBuffers("allgather", send, sendBytes, recv, recvBytes,
                 shifted(recv, static_cast<std::ptrdiff_t>(rank * sendBytes)));
  return {Collective::AllGather, send, recv, sendCount, dt};
}

CallArgs broadcastArgs(int rank, int size, const void* send, void* recv, std::size_t count, DataType dt, int root) {
  requireType(dt);
  requireRank("broadcast", "root", root, size);
  std::size_t bytes = byteSize("broadcast", count, dt);
  requireBuffers("broadcast", send, rank == root ? bytes : 0, recv, bytes, recv);
  return {Collective::Broadcast, send, recv, count, dt, ReduceOp::Sum, root};
}

CallArgs reduceArgs(int rank, int size, const void* send, void* recv, std::size_t count, DataType dt, ReduceOp op,
                    int root) {
  requireType(dt);
  requireOp(op);
  requireRank("reduce", "root", root, size);
  std::size_t bytes = byteSize("reduce", count, dt);
  requireBuffers("reduce", send, bytes, recv, rank == root ? bytes : 0, recv);
  return {Collective::Reduce, send, recv, count, dt, op, root};
}

CallArgs alltoallArgs(int size, const void* send, void* recv, std::size_t countPerPeer, DataType dt) {
  requireType(dt);
  std::size_t bytes = byteSize("alltoall", countPerPeer, dt, size);
  requireBuffers("alltoall", send, bytes, recv, bytes, recv);
  return {Collective::AllToAll, send, recv, countPerPeer, dt};
}

// Extent in bytes of the blocks (counts, displacements in elements) of one side.
std::size_t vectorExtent(const char* side, const std::size_t* counts, const std::size_t* displs, int size,
                         DataType dt) {
  TIERCC_REQUIRE_ARG(counts && displs, "alltoallv: ", side, " counts and displacements must not be null");
  std::size_t end = 0;
  for (int r = 0; r < size; ++r) {
    TIERCC_REQUIRE_ARG(counts[r] <= SIZE_MAX - displs[r], "alltoallv: ", side, " block ", r, " overflows");
    if (counts[r]) end = std::max(end, byteSize("alltoallv", counts[r] + displs[r], dt));
  }
  return end;
}

// The arrays are copied: an async call's need not outlive the call.
std::shared_ptr<OwnedCall> alltoallvCall(int rank, int size, const void* send, const std::size_t* sendCounts,
                                         const std::size_t* sendDispls, void* recv, const std::size_t* recvCounts,
                                         const std::size_t* recvDispls, DataType dt) {
  requireType(dt);
  const std::size_t sendBytes = vectorExtent("send", sendCounts, sendDispls, size, dt);
  const std::size_t recvBytes = vectorExtent("receive", recvCounts, recvDispls, size, dt);
  requireBuffers("alltoallv", send, sendBytes, recv, recvBytes, nullptr);
  TIERCC_REQUIRE_ARG(sendCounts[rank] == recvCounts[rank], "alltoallv: this rank sends itself ", sendCounts[rank],
                     " elements but expects ", recvCounts[rank], " from itself");
  auto call = std::make_shared<OwnedCall>();
  call->sendCounts.assign(sendCounts, sendCounts + size);
  call->sendDispls.assign(sendDispls, sendDispls + size);
  call->recvCounts.assign(recvCounts, recvCounts + size);
  call->recvDispls.assign(recvDispls, recvDispls + size);
  call->args = {Collective::AllToAllv, send, recv, 0, dt};
  call->args.sendCounts = call->sendCounts.data();
  call->args.sendDispls = call->sendDispls.data();
  call->args.recvCounts = call->recvCounts.data();
  call->args.recvDispls = call->recvDispls.data();
  return call;
}

std::shared_ptr<const OwnedCall> owned(const CallArgs& args) {
  auto call = std::make_shared<OwnedCall>();
  call->args = args;
  return call;
}

const CallArgs kBarrier{Collective::Barrier, nullptr, nullptr, 0, DataType::U8};

}  // namespace

void Communicator::allreduce(const void* send, void* recv, std::size_t count, DataType dt, ReduceOp op) {
  live(impl_).runBlocking("allreduce", allreduceArgs(send, recv, count, dt, op));
}
Work Communicator::allreduceAsync(const void* send, void* recv, std::size_t count, DataType dt, ReduceOp op) {
  return live(impl_).runAsync("allreduce", owned(allreduceArgs(send, recv, count, dt, op)));
}

void Communicator::reduceScatter(const void* send, void* recv, std::size_t recvCount, DataType dt, ReduceOp op) {
  Impl& c = live(impl_);
  c.runBlocking("reduce_scatter", reduceScatterArgs(rank(), size(), send, recv, recvCount, dt, op));
}
Work Communicator::reduceScatterAsync(const void* send, void* recv, std::size_t recvCount, DataType dt, ReduceOp op) {
  Impl& c = live(impl_);
  return c.runAsync("reduce_scatter", owned(reduceScatterArgs(rank(), size(), send, recv, recvCount, dt, op)));
}

void Communicator::allgather(const void* send, void* recv, std::size_t sendCount, DataType dt) {
  Impl& c = live(impl_);
  c.runBlocking("allgather", allgatherArgs(rank(), size(), send, recv, sendCount, dt));
}
Work Communicator::allgatherAsync(const void* send, void* recv, std::size_t sendCount, DataType dt) {
  Impl& c = live(impl_);
  return c.runAsync("allgather", owned(allgatherArgs(rank(), size(), send, recv, sendCount, dt)));
}

void Communicator::broadcast(const void* send, void* recv, std::size_t count, DataType dt, int root) {
  Impl& c = live(impl_);
  c.runBlocking("broadcast", broadcastArgs(rank(), size(), send, recv, count, dt, root));
}
Work Communicator::broadcastAsync(const void* send, void* recv, std::size_t count, DataType dt, int root) {
  Impl& c = live(impl_);
  return c.runAsync("broadcast", owned(broadcastArgs(rank(), size(), send, recv, count, dt, root)));
}

void Communicator::reduce(const void* send, void* recv, std::size_t count, DataType dt, ReduceOp op, int root) {
  Impl& c = live(impl_);
  c.runBlocking("reduce", reduceArgs(rank(), size(), send, recv, count, dt, op, root));
}
Work Communicator::reduceAsync(const void* send, void* recv, std::size_t count, DataType dt, ReduceOp op, int root) {
  Impl& c = live(impl_);
  return c.runAsync("reduce", owned(reduceArgs(rank(), size(), send, recv, count, dt, op, root)));
}

void Communicator::alltoall(const void* send, void* recv, std::size_t countPerPeer, DataType dt) {
  Impl& c = live(impl_);
  c.runBlocking("alltoall", alltoallArgs(size(), send, recv, countPerPeer, dt));
}
Work Communicator::alltoallAsync(const void* send, void* recv, std::size_t countPerPeer, DataType dt) {
  Impl& c = live(impl_);
  return c.runAsync("alltoall", owned(alltoallArgs(size(), send, recv, countPerPeer, dt)));
}

void Communicator::alltoallv(const void* send, const std::size_t* sendCounts, const std::size_t* sendDispls, void* recv,
                             const std::size_t* recvCounts, const std::size_t* recvDispls, DataType dt) {
  Impl& c = live(impl_);
  auto call = alltoallvCall(rank(), size(), send, sendCounts, sendDispls, recv, recvCounts, recvDispls, dt);
  c.runBlocking("alltoallv", call->args);
}
Work Communicator::alltoallvAsync(const void* send, const std::size_t* sendCounts, const std::size_t* sendDispls,
                                  void* recv, const std::size_t* recvCounts, const std::size_t* recvDispls,
                                  DataType dt) {
  Impl& c = live(impl_);
  return c.runAsync("alltoallv",
                    alltoallvCall(rank(), size(), send, sendCounts, sendDispls, recv, recvCounts, recvDispls, dt));
}

void Communicator::barrier() { live(impl_).runBlocking("barrier", kBarrier); }
Work Communicator::barrierAsync() { return live(impl_).runAsync("barrier", owned(kBarrier)); }

void Communicator::send(const void* buf, std::size_t count, DataType dt, int peer) {
  Impl& c = live(impl_);
  requireType(dt);
  requireRank("send", "peer", peer, size());
  TIERCC_REQUIRE_ARG(peer != rank(), "send: peer ", peer, " is this rank");
  std::size_t bytes = byteSize("send", count, dt);
  requireBuffers("send", buf, bytes, nullptr, 0, nullptr);
  CallArgs args{Collective::Send, buf, nullptr, count, dt};
  args.peer = peer;
  c.runPointToPoint(args);
}

void Communicator::recv(void* buf, std::size_t count, DataType dt, int peer) {
  Impl& c = live(impl_);
  requireType(dt);
  requireRank("recv", "peer", peer, size());
  TIERCC_REQUIRE_ARG(peer != rank(), "recv: peer ", peer, " is this rank");
  std::size_t bytes = byteSize("recv", count, dt);
  requireBuffers("recv", nullptr, 0, buf, bytes, nullptr);
  CallArgs args{Collective::Recv, nullptr, buf, count, dt};
  args.peer = peer;
  c.runPointToPoint(args);
}

}  // namespace tiercc
