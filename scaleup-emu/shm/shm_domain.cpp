// Shared-memory Domain (see shm_domain.hpp).
#include "scaleup-emu/shm/shm_domain.hpp"

#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <mutex>
#include <thread>

#include "bootstrap/store.hpp"
#include "core/cpu_relax.hpp"
#include "core/errors.hpp"
#include "core/log.hpp"
#include "core/membarrier.hpp"
#include "core/params.hpp"
#include "scaleup-emu/shm/futex.hpp"

namespace tiercc {

namespace {
constexpr std::size_t kHeaderBytes = 8192;  // pages: keeps the window page-aligned
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

}  // namespace

// One flag per cache line, so that a rank's signals do not slow its neighbours' reads, and its
// count of sleepers on a line of its own: a signal reads the count, and on the flag's line
// that read waited for the line the peer polls (perf: the load of the count was 36% of a
// reader's cycles in an 8 B broadcast; apart, 0.46 -> 0.41 us per call in this VM's slower
// state, the same in its faster one). Only sleepers write the count; it stays in both caches.
struct Flag {
  alignas(64) std::atomic<std::uint32_t> value{0};
  alignas(64) std::atomic<std::uint32_t> waiters{0};
};

struct ShmDomain::Header {
  Flag flags[kNumFlags];
  std::atomic<int> pid{0};
  std::atomic<int> failed{0};  // set by poison(), with the reason below
  // 1: this process's signals skip the store-load fence, so a waiter about to sleep on them
  // must fence this process with membarrier (core/membarrier.hpp). Written before peers map it.
  std::atomic<int> unfencedSignals{0};
  char reason[512] = {};
  std::atomic<std::uint64_t> selfAddress{0};  // this header's address in its owner's process (CMA probe)
  alignas(64) std::byte mailbox[Domain::kMailboxBytes + Domain::kCallStampBytes] = {};
};
static_assert(sizeof(ShmDomain::Header) <= kHeaderBytes);

ShmDomain::ShmDomain(Store& store, ShmDomainConfig config)
    : config_(std::move(config)),
      heap_(config_.segmentPrefix, config_.localRank, static_cast<int>(config_.peerNames.size())) {
  const int n = size();
  const std::size_t bytes = kHeaderBytes + config_.windowBytes;
  auto segName = [&](int r) { return config_.segmentPrefix + "-l" + std::to_string(r); };

  // Checked before anything is created: a bad value changes nothing.
  const std::string signals = params::getString("TIERCC_SHM_SIGNAL");
  TIERCC_REQUIRE_ARG(signals == "auto" || signals == "fenced", "TIERCC_SHM_SIGNAL='", signals,
                     "' is not one of auto, fenced");
  unfencedSignals_ = signals == "auto" && membarrier::registerProcess();

  segments_.resize(n);
  // Let peers read this process (cross-memory attach) where Yama would otherwise forbid it; only
  // where there are peers that may: before they probe, which they do once our segment is mapped.
  if (n > 1 && params::getString("TIERCC_SHM_COPY") != "staged") ptracer_.take();
  segments_[config_.localRank] = ShmSegment::create(segName(config_.localRank), bytes);
  new (segments_[config_.localRank].data()) Header();
  header(config_.localRank)->pid.store(getpid());
  header(config_.localRank)->selfAddress.store(reinterpret_cast<std::uintptr_t>(header(config_.localRank)));
  header(config_.localRank)->unfencedSignals.store(unfencedSignals_ ? 1 : 0);
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
  decideCopyMode(store);
  TIERCC_LOG(Info, Shm) << "shm domain of " << n << " ranks mapped, window " << config_.windowBytes
                        << " bytes per rank, signals "
                        << (unfencedSignals_ ? "unfenced (sleepers fence with membarrier)" : "fenced");
}

ShmDomain::~ShmDomain() = default;

namespace {
std::mutex ptracerMutex;
int ptracerHolders = 0;  // ShmDomains of this process that hold the consent
}  // namespace

void ShmDomain::PtracerConsent::take() {
  if (held_) return;
  std::lock_guard<std::mutex> lock(ptracerMutex);
  if (ptracerHolders++ == 0) prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);  // EINVAL without Yama: nothing to do
  held_ = true;
}

void ShmDomain::PtracerConsent::drop() {
  if (!held_) return;
  std::lock_guard<std::mutex> lock(ptracerMutex);
  if (--ptracerHolders == 0) prctl(PR_SET_PTRACER, 0, 0, 0, 0);
  held_ = false;
}

ShmDomain::Header* ShmDomain::header(int peer) {
  return reinterpret_cast<Header*>(segments_[peer].data());
}

std::byte* ShmDomain::window(int peer) { return segments_[peer].data() + kHeaderBytes; }

std::byte* ShmDomain::mailbox(int peer) { return header(peer)->mailbox; }

void* ShmDomain::allocateSymmetric(Store& store, std::size_t bytes, Deadline deadline) {
  return heap_.allocate(store, bytes, deadline);
}

void ShmDomain::freeSymmetric(void* p) { heap_.release(p); }

// Cross-memory attach needs ptrace-like permission on the peer: same user and, under Yama
// (ptrace_scope 1), the peer's consent, which PR_SET_PTRACER gives (as Open MPI's vader does).
// Each rank reads a word of every peer's header through process_vm_readv and checks it against
// its own mapping; the ranks then agree: single copy only if every rank can read every peer.
void ShmDomain::decideCopyMode(Store& store) {
  const std::string mode = params::getString("TIERCC_SHM_COPY");
  TIERCC_REQUIRE_ARG(mode == "auto" || mode == "cma" || mode == "staged", "TIERCC_SHM_COPY='", mode,
                     "' is not one of auto, cma, staged");
  const int n = size(), me = config_.localRank;
  if (mode == "staged" || n == 1) {
    TIERCC_LOG(Info, Init) << "shm copy: staged through the windows ("
                           << (n == 1 ? "one rank in the domain" : "TIERCC_SHM_COPY=staged") << ")";
    return;
  }
  std::string problem;
  for (int r = 0; r < n && problem.empty(); ++r) {
    if (r == me) continue;
    Header* h = header(r);
    int seen = 0;
    iovec local{&seen, sizeof(seen)};
    iovec remote{reinterpret_cast<void*>(h->selfAddress.load() + offsetof(Header, pid)), sizeof(seen)};
    const ssize_t got = process_vm_readv(h->pid.load(), &local, 1, &remote, 1, 0);
    if (got != static_cast<ssize_t>(sizeof(seen)))
      problem = concat("process_vm_readv of ", config_.peerNames[r],
                       " failed: ", got < 0 ? std::strerror(errno) : "short read");
    else if (seen != h->pid.load())
      problem = concat("process_vm_readv of ", config_.peerNames[r], " read the wrong data");
  }
  store.setString("cma/" + std::to_string(me), problem.empty() ? "ok" : problem);
  for (int r = 0; r < n; ++r) {
    std::string theirs = store.getString("cma/" + std::to_string(r), config_.setupDeadline);
    if (theirs != "ok" && problem.empty()) problem = concat(config_.peerNames[r], ": ", theirs);
  }
  crossMemoryAttach_ = problem.empty();
  if (!crossMemoryAttach_) ptracer_.drop();  // nobody will read this process for this domain
  if (!crossMemoryAttach_ && mode == "cma")
    fail(ErrorCode::NotSupported, "TIERCC_SHM_COPY=cma, but cross-memory attach does not work here (", problem,
         "); unset it or use auto to fall back to staged copies");
  TIERCC_LOG(Info, Init) << "shm copy: "
                         << (crossMemoryAttach_ ? "cross-memory attach (single copy) for ordinary buffers"
                                                : "staged through the windows, cross-memory attach is not permitted "
                                                  "here (" + problem + ")");
}

void ShmDomain::readPeer(int peer, std::uint64_t remote, void* dst, std::size_t bytes) {
  auto* out = static_cast<char*>(dst);
  const int pid = header(peer)->pid.load();
  while (bytes > 0) {
    iovec local{out, bytes};
    iovec from{reinterpret_cast<void*>(remote), bytes};
    const ssize_t got = process_vm_readv(pid, &local, 1, &from, 1, 0);
    if (got <= 0)
      fail(ErrorCode::SystemError, "cross-memory read of ", bytes, " bytes from ", config_.peerNames[peer],
           " failed: ", got < 0 ? std::strerror(errno) : "nothing read");
    out += got;
    remote += static_cast<std::uint64_t>(got);
    bytes -= static_cast<std::size_t>(got);
  }
}

// The store and the read of the waiter count must not be reordered, or a waiter about to sleep
// and this signal can each miss the other (core/membarrier.hpp). Unfenced, only the compiler is kept
// from reordering them; the sleeper's membarrier orders the CPU.
void ShmDomain::signal(int flag, std::uint32_t value) {
  Flag& f = header(config_.localRank)->flags[flag];
  if (unfencedSignals_) {
    f.value.store(value, std::memory_order_release);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    if (f.waiters.load(std::memory_order_relaxed) != 0) futex::wakeAll(&f.value);
    return;
  }
  f.value.store(value, std::memory_order_seq_cst);
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
  Header* h = header(peer);
  Flag& f = h->flags[flag];
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
    if (h->unfencedSignals.load(std::memory_order_relaxed)) membarrier::fenceEveryRegisteredProcess();
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
