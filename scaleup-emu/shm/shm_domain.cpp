// Shared-memory Domain (see shm_domain.hpp).
#include "scaleup-emu/shm/shm_domain.hpp"

#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <thread>

#include "core/errors.hpp"
#include "core/log.hpp"
#include "scaleup-emu/shm/futex.hpp"
#include "transport/bootstrap/store.hpp"

namespace tiercc {

namespace {
constexpr std::size_t kHeaderBytes = 4096;  // keeps the window page-aligned
// Before sleeping on the futex a waiter spins, then yields. Spinning pays when every rank has
// a core; when ranks outnumber cores, yielding hands the core to the rank being waited for.
constexpr auto kSpinTime = std::chrono::microseconds(20);
constexpr auto kSpinTimeOversubscribed = std::chrono::microseconds(1);
constexpr auto kYieldTime = std::chrono::microseconds(200);
constexpr auto kWaitSlice = std::chrono::milliseconds(50);

bool processGone(int pid) {
  if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
  // A zombie still answers kill(); its state in /proc tells. The state follows the command
  // name's closing parenthesis (the name itself may contain spaces).
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  std::size_t close = line.rfind(')');
  if (close == std::string::npos || close + 2 >= line.size()) return false;
  char state = line[close + 2];
  return state == 'Z' || state == 'X';
}

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}
}  // namespace

// One flag per cache line, so that a rank's signals do not slow its neighbours' reads.
struct alignas(64) Flag {
  std::atomic<std::uint32_t> value{0};
  std::atomic<std::uint32_t> waiters{0};
};

struct ShmDomain::Header {
  Flag flags[kNumFlags];
  std::atomic<int> pid{0};
  std::atomic<int> failed{0};  // set by poison(), with the reason below
  char reason[512] = {};
};
static_assert(sizeof(ShmDomain::Header) <= kHeaderBytes);

ShmDomain::ShmDomain(Store& store, ShmDomainConfig config) : config_(std::move(config)) {
  const int n = size();
  const std::size_t bytes = kHeaderBytes + config_.windowBytes;
  auto segName = [&](int r) { return config_.segmentPrefix + "-l" + std::to_string(r); };

  segments_.resize(n);
  segments_[config_.localRank] = ShmSegment::create(segName(config_.localRank), bytes);
  new (segments_[config_.localRank].data()) Header();
  header(config_.localRank)->pid.store(getpid());
  store.setString("created/" + std::to_string(config_.localRank), "1");

  for (int r = 0; r < n; ++r) {
    if (r == config_.localRank) continue;
    store.get("created/" + std::to_string(r), config_.setupDeadline);
    segments_[r] = ShmSegment::open(segName(r), bytes);
  }
  // Once every peer has mapped our segment its name can go: nothing leaks after a crash.
  store.setString("mapped/" + std::to_string(config_.localRank), "1");
  for (int r = 0; r < n; ++r) store.get("mapped/" + std::to_string(r), config_.setupDeadline);
  segments_[config_.localRank].unlink();
  TIERCC_LOG(Info, Shm) << "shm domain of " << n << " ranks mapped, window " << config_.windowBytes
                        << " bytes per rank";
}

ShmDomain::~ShmDomain() = default;

ShmDomain::Header* ShmDomain::header(int peer) {
  return reinterpret_cast<Header*>(segments_[peer].data());
}

std::byte* ShmDomain::window(int peer) { return segments_[peer].data() + kHeaderBytes; }

void ShmDomain::signal(int flag, std::uint32_t value) {
  Flag& f = header(config_.localRank)->flags[flag];
  f.value.store(value, std::memory_order_seq_cst);  // pairs with the waiter count (Dekker)
  if (f.waiters.load(std::memory_order_seq_cst) != 0) futex::wakeAll(&f.value);
}

std::string ShmDomain::peerFailure(int peer) {
  Header* h = header(peer);
  if (h->failed.load(std::memory_order_acquire))
    return concat(config_.peerNames[peer], " failed: ", std::string(h->reason, strnlen(h->reason, sizeof(h->reason))));
  int pid = h->pid.load();
  if (pid != getpid() && processGone(pid))
    return concat(config_.peerNames[peer], " (pid ", pid, ") died while this rank waited for it on the scale-up tier (shm)");
  return {};
}

void ShmDomain::waitUntil(int peer, int flag, std::uint32_t value, Deadline deadline, const std::string& what) {
  Flag& f = header(peer)->flags[flag];
  auto reached = [&](std::uint32_t v) { return static_cast<std::int32_t>(v - value) >= 0; };
  if (reached(f.value.load(std::memory_order_acquire))) return;
  const auto start = Clock::now();
  const auto spinUntil = start + (config_.oversubscribed ? kSpinTimeOversubscribed : kSpinTime);
  while (Clock::now() < spinUntil) {
    for (int i = 0; i < 32; ++i) {
      if (reached(f.value.load(std::memory_order_acquire))) return;
      cpuRelax();
    }
  }
  const auto yieldUntil = start + kYieldTime;
  while (Clock::now() < yieldUntil) {
    if (reached(f.value.load(std::memory_order_acquire))) return;
    sched_yield();
  }
  while (true) {
    std::uint32_t seen = f.value.load(std::memory_order_acquire);
    if (reached(seen)) return;
    if (aborted_.load()) fail(ErrorCode::Aborted, what, ": communicator aborted");
    // A peer may raise the flag and then exit: only a peer gone before reaching it failed us.
    if (std::string why = peerFailure(peer); !why.empty()) {
      if (reached(f.value.load(std::memory_order_acquire))) return;
      fail(ErrorCode::PeerFailure, what, ": ", why);
    }
    if (deadline.expired())
      fail(ErrorCode::Timeout, what, ": timed out waiting for ", config_.peerNames[peer],
           " on the scale-up tier (shm flag ", flag, " to reach ", value, ", it is at ", seen, ")");
    f.waiters.fetch_add(1, std::memory_order_seq_cst);
    if (!reached(f.value.load(std::memory_order_seq_cst)))
      futex::waitWhile(&f.value, seen, std::min(deadline.remaining(), std::chrono::milliseconds(kWaitSlice)));
    f.waiters.fetch_sub(1, std::memory_order_seq_cst);
  }
}

void ShmDomain::poison(const std::string& reason) {
  Header* h = header(config_.localRank);
  if (h->failed.load()) return;
  std::size_t n = std::min(reason.size(), sizeof(h->reason) - 1);
  std::memcpy(h->reason, reason.data(), n);
  h->reason[n] = '\0';
  h->failed.store(1, std::memory_order_release);
  for (Flag& f : h->flags) futex::wakeAll(&f.value);
}

void ShmDomain::abort() {
  aborted_.store(true);
  // Waiters re-check the abort flag at least every wait slice; waking them makes it prompt.
  for (int r = 0; r < size(); ++r)
    for (Flag& f : header(r)->flags) futex::wakeAll(&f.value);
}

}  // namespace tiercc
