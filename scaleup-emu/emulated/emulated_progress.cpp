// Emulated Domain (see emulated_domain.hpp): the progress thread, the only caller of the
// transport. It posts what signal() and poison() queue, reaps finished sends, and receives
// each peer's messages (emulated_wire.hpp) into the replicas, raising their flags.
#include <sched.h>

#include <algorithm>
#include <exception>

#include "core/errors.hpp"
#include "core/log.hpp"
#include "scaleup-emu/emulated/emulated_domain.hpp"
#include "scaleup-emu/emulated/emulated_wire.hpp"

namespace tiercc {

using namespace emulated_wire;

namespace {

constexpr const char* kWhat = "emulated scale-up domain";

// The progress thread cannot block inside the transport (its waits cannot be woken by a local
// signal, and their deadlines poison the connection), so it polls with test() and sleeps on a
// condition variable in between. Right after activity, while someone needs progress, it only
// yields (the next message of a round usually follows at once); then it sleeps for a quarter of
// the time it has been idle, between these bounds. A waiter or a queued signal wakes it at once.
constexpr auto kYieldTime = std::chrono::microseconds(200);
constexpr auto kMinSleep = std::chrono::microseconds(20);
constexpr auto kMaxSleepBusy = std::chrono::microseconds(1000);  // someone waits, or bytes are moving
constexpr auto kMaxSleepIdle = std::chrono::microseconds(5000);

}  // namespace

void EmulatedDomain::progressLoop() {
  try {
    for (int p = 0; p < size(); ++p)
      if (p != config_.localRank) postHeaderReceive(p);
    auto lastActivity = Clock::now();
    while (true) {
      bool moved = postQueued();
      moved = pollReceives() || moved;
      moved = reapSends() || moved;
      if (shutdownDone()) return;
      if (moved) {
        lastActivity = Clock::now();
        continue;
      }
      idle(lastActivity);
    }
  } catch (const std::exception& e) {
    // Nothing moves any more: every wait fails now, naming why, and the destructor finds the
    // thread gone. Sends still queued are dropped.
    TIERCC_LOG(Warn, Shm) << "emulated domain: progress thread stopped: " << e.what();
    for (int p = 0; p < size(); ++p)
      if (p != config_.localRank && !failed_[p]) peerFailed(p, concat("the progress thread stopped: ", e.what()));
    {
      std::lock_guard<std::mutex> lock(mu_);
      progressStopped_ = true;
      outgoing_.clear();
    }
    changed_.notify_all();
  }
}

void EmulatedDomain::idle(Clock::time_point lastActivity) {
  std::unique_lock<std::mutex> lock(mu_);
  const bool busy = waiters_ > 0 || !outgoing_.empty() ||
                    std::any_of(incoming_.begin(), incoming_.end(), [](const auto& in) {
                      return in->stage != Incoming::Stage::Header && in->stage != Incoming::Stage::Closed;
                    });
  const auto idleFor = Clock::now() - lastActivity;
  if (busy && idleFor < kYieldTime) {
    lock.unlock();
    sched_yield();
    return;
  }
  auto sleep = std::chrono::duration_cast<std::chrono::microseconds>(idleFor / 4);
  sleep = std::clamp<std::chrono::microseconds>(sleep, kMinSleep, busy ? kMaxSleepBusy : kMaxSleepIdle);
  const std::uint64_t seen = wakeups_;
  wake_.wait_for(lock, sleep, [&] { return wakeups_ != seen; });
}

bool EmulatedDomain::shutdownDone() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!stopping_) return false;
  if (Clock::now() >= stopDeadline_) {
    TIERCC_LOG(Warn, Shm) << "emulated domain: shutdown stopped waiting after its deadline ("
                          << outgoing_.size() << " message(s) unsent or peers without goodbye)";
    return true;
  }
  if (!outgoing_.empty()) return false;
  if (!graceful_) return true;
  for (int p = 0; p < size(); ++p)
    if (p != config_.localRank && !failed_[p] && !byeFrom_[p]) return false;
  return true;
}

// Posts every queued entry to every live peer (sends to a peer complete in posting order).
bool EmulatedDomain::postQueued() {
  std::vector<Outgoing*>& fresh = scratch_;
  fresh.clear();
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& out : outgoing_)
      if (!out->posted) {
        out->posted = true;
        for (int p = 0; p < size(); ++p)
          if (failed_[p]) out->pending[p] = 0;
        fresh.push_back(out.get());
      }
  }
  for (Outgoing* out : fresh) {
    out->ops.resize(size());
    for (int p = 0; p < size(); ++p) {
      if (p == config_.localRank || failed_[p]) continue;
      std::vector<TransferOp>& ops = out->ops[p];
      const bool table = out->header.kind == kSignal && out->ranges.size() > 1;
      const std::size_t data = out->header.kind == kSignal ? out->ranges.size() : (out->reason.empty() ? 0 : 1);
      ops.resize(1 + (table ? 1 : 0) + data);
      auto set = [&](TransferOp& op, std::uint64_t tag, const void* buf, std::size_t len) {
        op.peer = p;
        op.isSend = true;
        op.tag = tag;
        op.buf = static_cast<std::byte*>(const_cast<void*>(buf));  // sends only read it
        op.len = len;
      };
      std::size_t i = 0;
      set(ops[i++], kTagHeader, &out->header, sizeof(WireHeader));
      if (table) set(ops[i++], kTagTable, out->ranges.data(), out->ranges.size() * sizeof(ByteRange));
      if (out->header.kind == kSignal) {
        for (const ByteRange& r : out->ranges) set(ops[i++], kTagData, shadow_.get() + r.offset, r.len);
      } else if (data) {
        set(ops[i++], kTagReason, out->reason.data(), out->reason.size());
      }
      try {
        for (TransferOp& op : ops) transport_->isend(op);
      } catch (const Error& e) {
        peerFailed(p, e.what());
      }
    }
  }
  return !fresh.empty();
}

// Completes entries whose sends have all left; the shadow ranges they held become writable.
bool EmulatedDomain::reapSends() {
  std::vector<Outgoing*>& posted = scratch_;
  posted.clear();
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& out : outgoing_)
      if (out->posted) posted.push_back(out.get());
  }
  if (posted.empty()) return false;
  bool moved = false;
  for (Outgoing* out : posted) {
    for (int p = 0; p < size(); ++p) {
      std::vector<TransferOp>& ops = out->ops[p];
      if (ops.empty()) continue;
      const std::size_t before = ops.back().doneBytes;
      try {
        if (transport_->test(ops.back(), kWhat)) ops.clear();  // in order: the last one completes last
      } catch (const Error& e) {
        peerFailed(p, e.what());
      }
      moved = moved || ops.empty() || ops.back().doneBytes != before;
    }
  }
  bool anyDone = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (Outgoing* out : posted)
      for (int p = 0; p < size(); ++p) out->pending[p] = out->ops[p].empty() ? 0 : 1;
    // Finished entries leave the queue, the others keep their order; signal entries are kept
    // for reuse. By hand, not with stable_partition, which allocates.
    std::size_t kept = 0;
    for (auto& out : outgoing_) {
      const bool finished = out->posted && std::all_of(out->pending.begin(), out->pending.end(),
                                                       [](std::uint8_t pending) { return pending == 0; });
      if (finished) {
        anyDone = true;
        if (out->header.kind == kSignal) spare_.push_back(std::move(out));
      } else {
        if (&outgoing_[kept] != &out) outgoing_[kept] = std::move(out);
        ++kept;
      }
    }
    outgoing_.resize(kept);
  }
  if (anyDone) changed_.notify_all();
  return moved || anyDone;
}

bool EmulatedDomain::pollReceives() {
  bool moved = false;
  for (int p = 0; p < size(); ++p)
    if (p != config_.localRank && !gone_[p]) moved = pollPeer(p) || moved;
  return moved;
}

// Advances peer's receive stages as far as the arrived messages allow.
bool EmulatedDomain::pollPeer(int peer) {
  Incoming& in = *incoming_[peer];
  bool moved = false;
  try {
    while (!gone_[peer]) {
      for (TransferOp& op : in.ops) {
        if (op.complete) continue;
        const std::size_t before = op.doneBytes;
        if (!transport_->test(op, kWhat)) return moved || op.doneBytes != before;
      }
      moved = true;
      if (in.stage == Incoming::Stage::Header) onHeader(peer);
      else onPayload(peer);
    }
  } catch (const Error& e) {
    peerFailed(peer, e.what());
    moved = true;
  }
  return moved;
}

void EmulatedDomain::postHeaderReceive(int peer) {
  Incoming& in = *incoming_[peer];
  in.stage = Incoming::Stage::Header;
  in.ops.assign(1, TransferOp{});
  TransferOp& op = in.ops[0];
  op.peer = peer;
  op.tag = kTagHeader;
  op.buf = reinterpret_cast<std::byte*>(&in.header);
  op.len = sizeof(WireHeader);
  try {
    transport_->irecv(op);
  } catch (const Error& e) {
    peerFailed(peer, e.what());
  }
}

namespace {
void postReceive(Transport& t, std::vector<TransferOp>& ops, int peer, std::uint64_t tag, void* buf, std::size_t len) {
  TransferOp& op = ops.emplace_back();  // callers reserve: posted ops must not move
  op.peer = peer;
  op.tag = tag;
  op.buf = static_cast<std::byte*>(buf);
  op.len = len;
  t.irecv(op);
}
}  // namespace

void EmulatedDomain::onHeader(int peer) {
  Incoming& in = *incoming_[peer];
  const WireHeader& h = in.header;
  auto malformed = [&](const char* why) {
    peerFailed(peer, concat("sent a malformed scale-up message (", why, ")"));
  };
  if (h.magic != kMagic) return malformed("bad magic");
  in.ops.clear();
  if (h.kind == kBye) {
    in.stage = Incoming::Stage::Closed;
    gone_[peer] = true;
    byeFrom_[peer] = true;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (peerError_[peer].empty())
        peerError_[peer] = concat(config_.peerNames[peer], " left the scale-up domain (emulated): it destroyed its communicator");
    }
    changed_.notify_all();
    return;
  }
  if (h.kind == kPoison) {
    if (h.bytes > kMaxReason) return malformed("reason too long");
    in.reason.assign(h.bytes, '\0');
    in.stage = Incoming::Stage::Reason;
    if (h.bytes == 0) return onPayload(peer);
    in.ops.reserve(1);
    return postReceive(*transport_, in.ops, peer, kTagReason, in.reason.data(), in.reason.size());
  }
  if (h.kind != kSignal || h.flag >= kNumFlags) return malformed("bad kind or flag");
  if (h.nranges > 1) {
    if (h.bytes > replicated_ || h.nranges > h.bytes) return malformed("too many ranges");
    in.table.resize(h.nranges);
    in.stage = Incoming::Stage::Table;
    in.ops.reserve(1);
    return postReceive(*transport_, in.ops, peer, kTagTable, in.table.data(), h.nranges * sizeof(ByteRange));
  }
  in.table.clear();
  if (h.nranges == 1) in.table.push_back({h.offset, h.bytes});
  in.stage = Incoming::Stage::Table;
  onPayload(peer);  // the table is complete: post the data
}

void EmulatedDomain::onPayload(int peer) {
  Incoming& in = *incoming_[peer];
  const WireHeader& h = in.header;
  switch (in.stage) {
    case Incoming::Stage::Table: {
      std::uint64_t total = 0;
      for (const ByteRange& r : in.table) {
        if (r.len == 0 || r.offset > replicated_ || r.len > replicated_ - r.offset)
          return peerFailed(peer, concat("sent a malformed scale-up message (range ", r.offset, "+", r.len,
                                         " outside the window of ", replicated_, " bytes)"));
        total += r.len;
      }
      if (total != h.bytes)
        return peerFailed(peer, concat("sent a malformed scale-up message (ranges of ", total, " bytes, header says ",
                                       h.bytes, ")"));
      // Straight into the replica: under the round protocol nobody reads these bytes until the
      // flag below is raised.
      in.stage = Incoming::Stage::Data;
      in.ops.clear();
      in.ops.reserve(in.table.size());
      for (const ByteRange& r : in.table)
        postReceive(*transport_, in.ops, peer, kTagData, windows_[peer].get() + r.offset, r.len);
      return;
    }
    case Incoming::Stage::Data: {
      {
        std::lock_guard<std::mutex> lock(mu_);
        flags_[peer][h.flag] = h.value;
      }
      changed_.notify_all();
      return postHeaderReceive(peer);
    }
    case Incoming::Stage::Reason: {
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (peerError_[peer].empty()) peerError_[peer] = concat(config_.peerNames[peer], " failed: ", in.reason);
      }
      changed_.notify_all();
      return postHeaderReceive(peer);
    }
    default:
      return;
  }
}

void EmulatedDomain::peerFailed(int peer, const std::string& why) {
  gone_[peer] = true;
  failed_[peer] = true;
  incoming_[peer]->stage = Incoming::Stage::Closed;
  incoming_[peer]->ops.clear();  // a failed connection drops its operations
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& out : outgoing_)
      if (out->posted && static_cast<int>(out->ops.size()) > peer) out->ops[peer].clear();
    if (peerError_[peer].empty())
      peerError_[peer] = concat(config_.peerNames[peer], " failed on the scale-up tier (emulated over ",
                                transport_->name(), "): ", why);
  }
  changed_.notify_all();
  TIERCC_LOG(Info, Shm) << "emulated domain: " << config_.peerNames[peer] << ": " << why;
}

}  // namespace tiercc
