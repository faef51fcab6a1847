// Emulated Domain (see emulated_domain.hpp): construction and shutdown, the diffing signal(),
// and the waits on condition variables. The progress thread that moves the bytes, and with it
// the wire protocol, is in emulated_progress.cpp; the wire format in emulated_wire.hpp.
#include "scaleup-emu/emulated/emulated_domain.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "core/copy.hpp"
#include "core/errors.hpp"
#include "core/log.hpp"
#include "scaleup-emu/emulated/emulated_wire.hpp"
#include "transport/factory.hpp"

namespace tiercc {

using namespace emulated_wire;

namespace {

constexpr auto kAbortiveShutdown = std::chrono::milliseconds(1000);
constexpr auto kPoisonFlush = std::chrono::milliseconds(1000);
constexpr const char* kWhatSignal = "emulated scale-up domain";
// Receive vectors are reserved for this many ranges up front, so the usual signal (a range or
// a few) never grows them; a larger table grows them once.
constexpr std::size_t kReservedRanges = 64;

bool overlap(const ByteRange& a, const ByteRange& b) {
  return a.offset < b.offset + b.len && b.offset < a.offset + a.len;
}

}  // namespace

void EmulatedDomain::FreeBytes::operator()(std::byte* p) const { std::free(p); }

EmulatedDomain::EmulatedDomain(std::unique_ptr<Transport> transport, EmulatedDomainConfig config)
    : config_(std::move(config)), transport_(std::move(transport)) {
  const int n = size();
  TIERCC_REQUIRE_ARG(n >= 1 && config_.localRank >= 0 && config_.localRank < n, "emulated domain: local rank ",
                     config_.localRank, " of ", n);
  TIERCC_REQUIRE_ARG(n == 1 || transport_, "emulated domain: ", n, " members need a transport");
  // Page-aligned like the shm windows, and zeroed: window, shadow and replicas start equal.
  mailboxOffset_ = (config_.windowBytes + 63) / 64 * 64;
  replicated_ = mailboxOffset_ + kMailboxBytes + kCallStampBytes;
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
  for (int r = 0; r < n; ++r) {
    incoming_.push_back(std::make_unique<Incoming>());
    incoming_.back()->table.reserve(kReservedRanges);
    incoming_.back()->ops.reserve(kReservedRanges);
  }
  diff_.reserve(kReservedRanges);
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
        auto bye = takeSpare();
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
// waits for the overlapping sends to leave first. That wait is rare and short (the peers'
// progress threads always drain their connections), and bounded all the same: waitForShadow.
// The window itself is read only here.
void EmulatedDomain::signal(int flag, std::uint32_t value) {
  TIERCC_REQUIRE_ARG(flag >= 0 && flag < kNumFlags, "signal: flag ", flag, " is not in [0, ", kNumFlags, ")");
  const int me = config_.localRank;
  if (size() == 1) {
    std::lock_guard<std::mutex> lock(mu_);
    flags_[me][flag] = value;
    return;
  }
  std::byte* window = windows_[me].get();
  changedRanges(window, shadow_.get(), replicated_, diff_);
  std::unique_ptr<Outgoing> out;
  {
    std::unique_lock<std::mutex> lock(mu_);
    waitForShadow(flag, diff_, lock);
    if (aborted_.load() && overlapsInFlight(diff_)) return;  // nothing will read it any more
    flags_[me][flag] = value;
    out = takeSpare();
  }
  // The entry's old vector becomes the next diff's: capacities circulate, nothing is allocated.
  out->ranges.swap(diff_);
  out->header.flag = static_cast<std::uint32_t>(flag);
  out->header.value = value;
  out->header.nranges = static_cast<std::uint32_t>(out->ranges.size());
  for (const ByteRange& r : out->ranges) out->header.bytes += r.len;
  if (out->ranges.size() == 1) out->header.offset = out->ranges[0].offset;
  // Outside the lock: only this thread adds ranges to the in-flight set, so none of these
  // ranges can become in flight before this entry is queued.
  for (const ByteRange& r : out->ranges) copyBytes(shadow_.get() + r.offset, window + r.offset, r.len);
  enqueue(std::move(out));
}

// Waits, for at most config_.timeout, until no send in flight still reads shadow bytes in
// `ranges`. The peers' progress threads always drain their connections, so this is short unless
// a peer stopped reading (stopped or wedged without closing): then it fails, naming who.
void EmulatedDomain::waitForShadow(int flag, const std::vector<ByteRange>& ranges, std::unique_lock<std::mutex>& lock) {
  if (aborted_.load() || !overlapsInFlight(ranges)) return;
  const Deadline deadline = Deadline::after(config_.timeout);
  while (!aborted_.load() && overlapsInFlight(ranges)) {
    if (deadline.expired())
      fail(ErrorCode::Timeout, kWhatSignal, ": signal(flag ", flag, ") timed out after ", config_.timeout.count(),
           " ms waiting for earlier sends to ", pendingPeers(ranges),
           " to complete (a peer that stops reading its emulated scale-up connection stalls them)");
    if (deadline.at() == Clock::time_point::max()) changed_.wait(lock);
    else changed_.wait_until(lock, deadline.at());
  }
}

// Recycles a finished signal entry, or makes a new one; either way blank and due to every peer.
std::unique_ptr<EmulatedDomain::Outgoing> EmulatedDomain::takeSpare() {
  std::unique_ptr<Outgoing> out;
  if (spare_.empty()) {
    out = std::make_unique<Outgoing>();
  } else {
    out = std::move(spare_.back());
    spare_.pop_back();
  }
  out->header = WireHeader{};
  out->reason.clear();
  out->posted = false;
  out->ranges.clear();
  for (auto& ops : out->ops) ops.clear();
  out->pending.assign(size(), 1);
  out->pending[config_.localRank] = 0;
  return out;
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

// The peers that still hold sends overlapping `ranges`, for the timeout's message.
std::string EmulatedDomain::pendingPeers(const std::vector<ByteRange>& ranges) const {
  std::vector<bool> stuck(size(), false);
  for (const auto& out : outgoing_) {
    const bool overlaps = std::any_of(out->ranges.begin(), out->ranges.end(), [&](const ByteRange& busy) {
      return std::any_of(ranges.begin(), ranges.end(), [&](const ByteRange& r) { return overlap(busy, r); });
    });
    if (!overlaps) continue;
    for (int p = 0; p < size(); ++p) stuck[p] = stuck[p] || out->pending[p] != 0;
  }
  std::string names;
  for (int p = 0; p < size(); ++p)
    if (stuck[p]) names += (names.empty() ? "" : ", ") + config_.peerNames[p];
  return names.empty() ? std::string("no peer (the progress thread has not reaped them)") : names;
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
  std::unique_ptr<Outgoing> out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (poisoned_ || stopping_) return;
    poisoned_ = true;
    out = takeSpare();
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
    ts.localRank = config.localRank;
    ts.spansHosts = config.spansHosts;
    ts.deadline = deadline;
    transport = createTransport(transportName, store, ts);
  }
  return std::make_unique<EmulatedDomain>(std::move(transport), std::move(config));
}

}  // namespace tiercc
