// Emulated Domain (see emulated_domain.hpp): the wire format, the diffing signal(), waits on
// condition variables, and the progress thread that owns every call into the transport.
//
// Wire format, per peer and in order: a fixed WireHeader, then what it announces:
//  - Signal: `nranges` changed ranges of the sender's window, `bytes` in all. With one range
//    the header carries it; with more, a table of ByteRange follows. Then one data message per
//    range, received straight into the replica. The flag is raised once all have arrived.
//  - Poison: `bytes` of the reason.   - Bye: nothing; the sender will send no more.
#include "scaleup-emu/emulated/emulated_domain.hpp"

#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "core/errors.hpp"
#include "core/log.hpp"
#include "transport/factory.hpp"

namespace tiercc {

namespace {

constexpr std::uint32_t kMagic = 0x554d4545;  // "EEMU"
enum Kind : std::uint32_t { kSignal = 1, kPoison = 2, kBye = 3 };
enum Tag : std::uint64_t { kTagHeader = 0xE0, kTagTable = 0xE1, kTagData = 0xE2, kTagReason = 0xE3 };
constexpr std::size_t kMaxReason = 4000;
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
constexpr auto kAbortiveShutdown = std::chrono::milliseconds(1000);
constexpr auto kPoisonFlush = std::chrono::milliseconds(1000);

bool overlap(const ByteRange& a, const ByteRange& b) {
  return a.offset < b.offset + b.len && b.offset < a.offset + a.len;
}

}  // namespace

struct EmulatedDomain::WireHeader {
  std::uint32_t magic = kMagic;
  std::uint32_t kind = kSignal;
  std::uint32_t flag = 0;
  std::uint32_t value = 0;
  std::uint32_t nranges = 0;
  std::uint32_t reserved = 0;
  std::uint64_t bytes = 0;   // data (Signal) or reason (Poison) bytes that follow
  std::uint64_t offset = 0;  // Signal with one range: where it goes
};
static_assert(sizeof(EmulatedDomain::WireHeader) == 40);

// One signal, poison or goodbye to every peer. Its ranges point into the shadow, which
// signal() leaves alone while they are in flight.
struct EmulatedDomain::Outgoing {
  WireHeader header;
  std::vector<ByteRange> ranges;
  std::string reason;
  bool posted = false;                         // progress thread only
  std::vector<std::vector<TransferOp>> ops;    // per local rank; empty once done with that peer
};

struct EmulatedDomain::Incoming {
  enum class Stage { Header, Table, Data, Reason, Closed };
  Stage stage = Stage::Closed;
  WireHeader header;
  std::vector<ByteRange> table;
  std::string reason;
  std::vector<TransferOp> ops;  // the receives of the current stage, in posting order
};

void EmulatedDomain::FreeBytes::operator()(std::byte* p) const { std::free(p); }

EmulatedDomain::EmulatedDomain(std::unique_ptr<Transport> transport, EmulatedDomainConfig config)
    : config_(std::move(config)), transport_(std::move(transport)) {
  const int n = size();
  TIERCC_REQUIRE_ARG(n >= 1 && config_.localRank >= 0 && config_.localRank < n, "emulated domain: local rank ",
                     config_.localRank, " of ", n);
  TIERCC_REQUIRE_ARG(n == 1 || transport_, "emulated domain: ", n, " members need a transport");
  // Page-aligned like the shm windows, and zeroed: window, shadow and replicas start equal.
  mailboxOffset_ = (config_.windowBytes + 63) / 64 * 64;
  replicated_ = mailboxOffset_ + kMailboxBytes;
  const std::size_t bytes = (replicated_ + 4095) / 4096 * 4096;
  auto allocate = [&] {
    auto* p = static_cast<std::byte*>(std::aligned_alloc(4096, bytes));
    if (!p) fail(ErrorCode::SystemError, "emulated domain: cannot allocate a window of ", bytes, " bytes");
    std::memset(p, 0, bytes);
    return Buffer(p);
  };
  for (int r = 0; r < n; ++r) windows_.push_back(allocate());
  shadow_ = allocate();
  flags_.assign(n, {});
  peerError_.assign(n, {});
  gone_.assign(n, false);
  failed_.assign(n, false);
  byeFrom_.assign(n, false);
  for (int r = 0; r < n; ++r) incoming_.push_back(std::make_unique<Incoming>());
  if (n > 1) progress_ = std::thread([this] { progressLoop(); });
  TIERCC_LOG(Info, Shm) << "emulated domain of " << n << " ranks over " << (transport_ ? transport_->name() : "nothing")
                        << ", window " << config_.windowBytes << " bytes per rank";
}

EmulatedDomain::~EmulatedDomain() {
  if (progress_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      // A clean goodbye lets every member drain its connections before they close (a socket
      // closed with unread data resets, losing what it still had to send). After an abort or
      // poison the peers are not cooperating: flush what is queued, briefly, and go.
      const bool graceful = !aborted_.load() && !poisoned_;
      stopDeadline_ = Clock::now() + (graceful ? config_.shutdownTimeout : kAbortiveShutdown);
      graceful_ = graceful;
      if (graceful) {
        auto bye = std::make_unique<Outgoing>();
        bye->header.kind = kBye;
        outgoing_.push_back(std::move(bye));
      }
      stopping_ = true;
      ++wakeups_;
    }
    wake_.notify_all();
    progress_.join();
  }
  transport_.reset();
}

// Why the shadow is the send buffer: the transport reads a send's bytes until it completes,
// later than signal() returns, and the collective may by then rewrite its window: legally, for
// bytes no peer reads (allreduce writes its reduced slice over its own staged slice while that
// staged data is still on its way). Sending from the window would then put the next flag's bytes
// under this flag. The shadow is written anyway (the next diff compares against it), so sending
// from it costs no extra copy; signal() must only not change shadow bytes still in flight, so it
// waits for the overlapping sends to leave first. That wait is rare and short: the peers'
// progress threads always drain their connections. The window itself is read only here.
void EmulatedDomain::signal(int flag, std::uint32_t value) {
  TIERCC_REQUIRE_ARG(flag >= 0 && flag < kNumFlags, "signal: flag ", flag, " is not in [0, ", kNumFlags, ")");
  const int me = config_.localRank;
  if (size() == 1) {
    std::lock_guard<std::mutex> lock(mu_);
    flags_[me][flag] = value;
    return;
  }
  std::byte* window = windows_[me].get();
  auto out = std::make_unique<Outgoing>();
  out->ranges = changedRanges(window, shadow_.get(), replicated_);
  out->header.flag = static_cast<std::uint32_t>(flag);
  out->header.value = value;
  out->header.nranges = static_cast<std::uint32_t>(out->ranges.size());
  for (const ByteRange& r : out->ranges) out->header.bytes += r.len;
  if (out->ranges.size() == 1) out->header.offset = out->ranges[0].offset;
  {
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait(lock, [&] { return aborted_.load() || !overlapsInFlight(out->ranges); });
    if (aborted_.load() && overlapsInFlight(out->ranges)) return;  // nothing will read it any more
    flags_[me][flag] = value;
  }
  // Outside the lock: only this thread adds ranges to the in-flight set, so none of these
  // ranges can become in flight before this entry is queued.
  for (const ByteRange& r : out->ranges) std::memcpy(shadow_.get() + r.offset, window + r.offset, r.len);
  enqueue(std::move(out));
}

void EmulatedDomain::enqueue(std::unique_ptr<Outgoing> out) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (progressStopped_) return;  // nobody would send it, or release its ranges
    outgoing_.push_back(std::move(out));
    ++wakeups_;
  }
  wake_.notify_one();
}

bool EmulatedDomain::overlapsInFlight(const std::vector<ByteRange>& ranges) const {
  for (const auto& out : outgoing_)
    for (const ByteRange& busy : out->ranges)
      for (const ByteRange& r : ranges)
        if (overlap(busy, r)) return true;
  return false;
}

void EmulatedDomain::waitUntil(int peer, int flag, std::uint32_t value, Deadline deadline, const std::string& what) {
  TIERCC_REQUIRE_ARG(peer >= 0 && peer < size() && flag >= 0 && flag < kNumFlags, what, ": waitUntil on peer ", peer,
                     " flag ", flag, " of a domain of ", size());
  auto reached = [&] { return static_cast<std::int32_t>(flags_[peer][flag] - value) >= 0; };
  std::unique_lock<std::mutex> lock(mu_);
  if (reached()) return;
  // While someone waits the progress thread polls eagerly; telling it now saves its backoff.
  ++waiters_;
  ++wakeups_;
  wake_.notify_one();
  struct Leave {
    int& waiters;
    ~Leave() { --waiters; }  // runs before `lock` unlocks
  } leave{waiters_};
  while (true) {
    if (reached()) return;
    if (aborted_.load()) fail(ErrorCode::Aborted, what, ": communicator aborted");
    if (!peerError_[peer].empty()) fail(ErrorCode::PeerFailure, what, ": ", peerError_[peer]);
    if (deadline.expired())
      fail(ErrorCode::Timeout, what, ": timed out waiting for ", config_.peerNames[peer],
           " on the scale-up tier (emulated flag ", flag, " to reach ", value, ", it is at ", flags_[peer][flag], ")");
    if (deadline.at() == Clock::time_point::max()) changed_.wait(lock);
    else changed_.wait_until(lock, deadline.at());
  }
}

void EmulatedDomain::abort() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    aborted_.store(true);
  }
  changed_.notify_all();
}

void EmulatedDomain::poison(const std::string& reason) {
  auto out = std::make_unique<Outgoing>();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (poisoned_ || stopping_) return;
    poisoned_ = true;
  }
  if (size() == 1) return;
  out->header.kind = kPoison;
  out->reason = reason.substr(0, kMaxReason);
  out->header.bytes = out->reason.size();
  const Outgoing* sent = out.get();
  enqueue(std::move(out));
  // Best effort, bounded: the caller may exit right after, and the peers should hear why.
  std::unique_lock<std::mutex> lock(mu_);
  changed_.wait_for(lock, kPoisonFlush, [&] {
    return std::none_of(outgoing_.begin(), outgoing_.end(), [&](const auto& o) { return o.get() == sent; });
  });
}

// ---- progress thread ----

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
  std::vector<Outgoing*> fresh;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& out : outgoing_)
      if (!out->posted) {
        out->posted = true;
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
  std::vector<Outgoing*> posted;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& out : outgoing_)
      if (out->posted) posted.push_back(out.get());
  }
  bool moved = false;
  std::vector<const Outgoing*> done;
  for (Outgoing* out : posted) {
    bool all = true;
    for (int p = 0; p < size(); ++p) {
      std::vector<TransferOp>& ops = out->ops[p];
      if (ops.empty()) continue;
      const std::size_t before = ops.back().doneBytes;
      try {
        if (transport_->test(ops.back(), kWhat)) ops.clear();  // in order: the last one completes last
      } catch (const Error& e) {
        peerFailed(p, e.what());
      }
      if (!ops.empty()) {
        all = false;
        moved = moved || ops.back().doneBytes != before;
      }
    }
    if (all) done.push_back(out);
  }
  if (done.empty()) return moved;
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::erase_if(outgoing_, [&](const auto& o) { return std::find(done.begin(), done.end(), o.get()) != done.end(); });
  }
  changed_.notify_all();
  return true;
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

std::unique_ptr<EmulatedDomain> createEmulatedDomain(const std::string& transportName, Store& store,
                                                     EmulatedDomainConfig config, Deadline deadline) {
  std::unique_ptr<Transport> transport;
  const int n = static_cast<int>(config.peerNames.size());
  if (n > 1) {
    TransportSetup ts;
    ts.rank = config.localRank;
    ts.worldSize = n;
    for (int r = 0; r < n; ++r)
      if (r != config.localRank) ts.peers.push_back(r);
    ts.peerName = [names = config.peerNames](int r) { return names.at(r); };
    ts.deadline = deadline;
    transport = createTransport(transportName, store, ts);
  }
  return std::make_unique<EmulatedDomain>(std::move(transport), std::move(config));
}

}  // namespace tiercc
