// The bandwidth and latency rounds of tiercc-transport-bench (see pair_bench.hpp). Every round
// starts when rank 1, its receives posted and its buffer cleared, sends rank 0 a "go"; in a
// bandwidth round rank 1 also acknowledges the last message with a "done".
#include "bench/transport/pair_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "core/errors.hpp"
#include "core/params.hpp"
#include "bootstrap/store.hpp"

namespace tiercc::tbench {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::uint64_t kDataTag = 0xDA7A;
constexpr std::uint64_t kControlTag = 0xC0;
constexpr std::size_t kAlign = 4096;

std::byte patternByte(std::size_t i) { return static_cast<std::byte>((i * 131 + 7) & 0xff); }

std::byte* allocatePages(std::size_t bytes) {
  std::size_t rounded = (std::max<std::size_t>(bytes, 1) + kAlign - 1) / kAlign * kAlign;
  void* p = std::aligned_alloc(kAlign, rounded);
  if (!p) fail(ErrorCode::SystemError, "cannot allocate ", rounded, " bytes");
  return static_cast<std::byte*>(p);
}

}  // namespace

struct PairBench::Round {
  std::size_t bytes = 0;
  int iters = 0;
  int window = 0;
  Deadline deadline{Clock::time_point::max()};
  std::string what;
};

PairBench::PairBench(Transport& transport, Store& store, int rank, const Options& options)
    : transport_(transport), options_(options), rank_(rank), peer_(1 - rank), capacity_(options.maxBytes) {
  send_ = allocatePages(capacity_);
  recv_ = allocatePages(capacity_);
  for (std::size_t i = 0; i < capacity_; ++i) send_[i] = patternByte(i);
  std::memset(recv_, 0, capacity_);  // touches every page before registration
  sendRegion_ = transport_.registerMemory(send_, capacity_);
  recvRegion_ = transport_.registerMemory(recv_, capacity_);
  store.set("transport-bench/recv-region/" + std::to_string(rank_), recvRegion_->descriptor());
  peerRecv_ = store.get("transport-bench/recv-region/" + std::to_string(peer_),
                        Deadline::after(params::getDuration("TIERCC_TIMEOUT")));
}

PairBench::~PairBench() {
  sendRegion_.reset();
  recvRegion_.reset();
  transport_.invalidateMemory(send_, capacity_);
  transport_.invalidateMemory(recv_, capacity_);
  std::free(send_);
  std::free(recv_);
}

Sample PairBench::run(std::size_t bytes) {
  TIERCC_REQUIRE_ARG(bytes >= 1 && bytes <= capacity_, "size ", bytes, " is outside 1..", capacity_);
  Sample out;
  for (int timed = 0; timed < 2; ++timed) {
    Round r;
    r.bytes = bytes;
    r.iters = timed ? options_.iters : options_.warmup;
    if (r.iters == 0) continue;
    r.window = std::min(options_.window, r.iters);
    r.deadline = Deadline::after(params::getDuration("TIERCC_TIMEOUT"));
    r.what = concat("tiercc-transport-bench ", modeName(options_.mode), " ", opName(options_.op), " ", bytes, " B",
                    timed ? "" : " (warm-up)");
    Sample s;
    if (options_.mode == Mode::Bandwidth) bandwidthRound(r, s);
    else latencyRound(r, s);
    if (timed) out = std::move(s);
  }
  return out;
}

// outgoing: rank 0's data (iwrite or isend) and every pong; otherwise a notification or receive.
void PairBench::post(TransferOp& op, bool outgoing) {
  op.peer = peer_;
  op.complete = false;
  if (outgoing) {
    op.isSend = true;
    op.buf = send_;
    if (options_.op == Op::Write) return transport_.iwrite(static_cast<WriteOp&>(op));
    op.tag = kDataTag;
    return transport_.isend(op);
  }
  op.isSend = false;
  op.buf = recv_;
  if (options_.op == Op::Write) return transport_.inotify(op);
  op.tag = kDataTag;
  transport_.irecv(op);
}

void PairBench::complete(TransferOp& op, const Round& r) {
  if (options_.poll == Poll::Block) return transport_.wait({&op}, r.deadline, r.what);
  for (unsigned spins = 1; !transport_.test(op, r.what); ++spins)
    if ((spins & 1023) == 0 && r.deadline.expired()) return transport_.wait({&op}, r.deadline, r.what);
}

void PairBench::sendControl(const Round& r) {
  TransferOp op;
  op.peer = peer_;
  op.isSend = true;
  op.tag = kControlTag;
  op.buf = reinterpret_cast<std::byte*>(&control_[0]);
  op.len = sizeof(control_[0]);
  transport_.isend(op);
  complete(op, r);
}

void PairBench::receiveControl(const Round& r) {
  TransferOp op;
  op.peer = peer_;
  op.tag = kControlTag;
  op.buf = reinterpret_cast<std::byte*>(&control_[1]);
  op.len = sizeof(control_[1]);
  transport_.irecv(op);
  complete(op, r);
}

// Rank 1's buffer holds what rank 0 sent (bw and lat), rank 0's what rank 1 sent back (lat).
void PairBench::checkReceived(std::size_t bytes) const {
  for (std::size_t i = 0; i < bytes; ++i)
    if (recv_[i] != patternByte(i))
      fail(ErrorCode::Internal, "wrong data received from rank ", peer_, " at byte ", i, " of ", bytes);
}

// A sliding window: rank 0 keeps r.window operations in flight and reposts the oldest as it
// completes (the transports complete one peer's operations in order); rank 1 likewise keeps
// r.window notifications or receives posted.
void PairBench::bandwidthRound(Round& r, Sample& out) {
  std::vector<WriteOp> ops(static_cast<std::size_t>(r.window));
  for (std::size_t i = 0; i < ops.size(); ++i) {
    ops[i].len = r.bytes;
    ops[i].imm = static_cast<std::uint32_t>(i);
    if (rank_ == 0) ops[i].remote = peerRecv_;
  }
  const bool sender = rank_ == 0;
  int posted = 0, done = 0;
  auto fillWindow = [&] {
    for (; posted < r.iters && posted - done < r.window; ++posted) {
      TransferOp& op = ops[static_cast<std::size_t>(posted % r.window)];
      op.len = r.bytes;
      post(op, sender);
    }
  };
  if (!sender) {
    std::memset(recv_, 0, r.bytes);
    fillWindow();
    sendControl(r);  // go
  } else {
    receiveControl(r);
  }
  auto start = Clock::now();
  while (done < r.iters) {
    fillWindow();
    TransferOp& op = ops[static_cast<std::size_t>(done % r.window)];
    complete(op, r);
    if (!sender && op.len != r.bytes)
      fail(ErrorCode::Internal, r.what, ": a notification reported ", op.len, " bytes written");
    ++done;
  }
  if (sender) {
    out.localSeconds = std::chrono::duration<double>(Clock::now() - start).count();
    receiveControl(r);  // done: the last message is in place at rank 1
    out.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  } else {
    sendControl(r);
    checkReceived(r.bytes);
  }
  out.bytes = r.bytes;
  out.iters = r.iters;
  out.window = r.window;
}

// Ping-pong: rank 0 writes (or sends) to rank 1, which answers as soon as the ping is in place.
void PairBench::latencyRound(Round& r, Sample& out) {
  WriteOp ping, pong;
  ping.len = pong.len = r.bytes;
  if (rank_ == 0) ping.remote = peerRecv_;
  else pong.remote = peerRecv_;
  std::memset(recv_, 0, r.bytes);
  if (rank_ == 1) sendControl(r);  // go: rank 1's buffer is clear
  else receiveControl(r);
  out.oneWayUs.reserve(static_cast<std::size_t>(r.iters));
  for (int i = 0; i < r.iters; ++i) {
    ping.len = pong.len = r.bytes;
    if (rank_ == 0) {
      auto start = Clock::now();
      post(pong, false);
      post(ping, true);
      complete(pong, r);
      complete(ping, r);
      out.oneWayUs.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count() / 2);
    } else {
      post(ping, false);
      complete(ping, r);
      post(pong, true);
      complete(pong, r);
    }
  }
  checkReceived(r.bytes);
  out.bytes = r.bytes;
  out.iters = r.iters;
  out.window = 1;
}

}  // namespace tiercc::tbench
