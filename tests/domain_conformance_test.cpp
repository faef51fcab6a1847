// The scale-up Domain contract (scaleup-emu/domain.hpp), checked on every backend: shm (same
// host; its signals unfenced and fenced, TIERCC_SHM_SIGNAL) and emulated (over a tcp transport
// on loopback). Each job forks real ranks that build the backend through a factory and run
// several cases on fresh domains, so the suite stays fast on two cores: bytes written to a
// window are read by every peer after the flag, flags are monotonic across wrap-around, a
// signal wakes a peer asleep on it, waits end at their deadline, on abort, on poison and when
// a peer dies, and the round protocol of the collectives survives many rounds of random sizes.
#include <glob.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/store.hpp"
#include "scaleup-emu/emulated/emulated_domain.hpp"
#include "scaleup-emu/emulated/window_diff.hpp"
#include "scaleup-emu/shm/shm_domain.hpp"
#include "tests/support/multiprocess.hpp"
#include "tiercc/error.hpp"

namespace tiercc::test {
namespace {

using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

constexpr std::size_t kWindow = 40960 + 64;  // not a multiple of the diff's block on purpose
constexpr int kStaged = 0, kReleased = 2;

std::string segmentPrefix(pid_t job) { return "/tiercc-dconf-" + std::to_string(job); }

// One rank's view of a job: its store connection and the domains it builds on it.
struct Rank {
  std::string backend;
  int rank = 0, n = 0;
  std::shared_ptr<Store> store;

  /// The domain `label` (fresh keys and segments per label) for local rank `rank` of `n`.
  std::unique_ptr<Domain> domain(const std::string& label) {
    std::vector<std::string> names;
    for (int r = 0; r < n; ++r) names.push_back("rank " + std::to_string(r) + " (local rank " + std::to_string(r) + ")");
    PrefixStore keys(store, "dconf/" + label + "/");
    if (backend == "shm" || backend == "shm-fenced") {
      // Both ways of ordering a signal against a sleeper (shm_domain.cpp): unfenced signals with
      // membarrier where the kernel offers it, and a fence in every signal.
      setenv("TIERCC_SHM_SIGNAL", backend == "shm" ? "auto" : "fenced", 1);
      ShmDomainConfig c;
      c.segmentPrefix = segmentPrefix(getppid()) + "-" + label;
      c.localRank = rank;
      c.peerNames = names;
      c.windowBytes = kWindow;
      c.setupDeadline = Deadline::after(20s);
      return std::make_unique<ShmDomain>(keys, c);
    }
    EmulatedDomainConfig c{rank, names, kWindow};
    c.shutdownTimeout = 5000ms;
    return createEmulatedDomain("tcp", keys, c, Deadline::after(20s));
  }
  /// Every rank of the job reaches `key` (through the store, not the domain under test).
  void barrier(const std::string& key) {
    store->add("barrier/" + key, 1);
    Deadline d = Deadline::after(30s);
    while (store->add("barrier/" + key, 0) < n) {
      TIERCC_CHECK(!d.expired(), "barrier " << key << " timed out");
      std::this_thread::sleep_for(1ms);
    }
  }
};

Rank join(const std::string& backend, int rank, int n, const std::string& addr) {
  return Rank{backend, rank, n, test::connectJobStore(addr, 10s)};
}

// Deterministic bytes for (seed, position).
void fill(std::byte* out, std::size_t len, std::uint64_t seed) {
  std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (std::size_t i = 0; i < len; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    out[i] = static_cast<std::byte>(x);
  }
}

bool filled(const std::byte* got, std::size_t len, std::uint64_t seed) {
  std::vector<std::byte> want(len);
  fill(want.data(), len, seed);
  return std::memcmp(got, want.data(), len) == 0;
}

// Runs `body` expecting an Error with `code` whose message starts with `what` and names
// `needle`, within `limit`; returns how long it took.
template <typename Body>
std::chrono::milliseconds expectError(ErrorCode code, const std::string& what, const std::string& needle,
                                      std::chrono::milliseconds limit, Body body) {
  auto start = SteadyClock::now();
  try {
    body();
  } catch (const Error& e) {
    auto took = std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - start);
    std::string msg = e.what();
    TIERCC_CHECK(e.code() == code, "expected " << toString(code) << ", got " << toString(e.code()) << ": " << msg);
    TIERCC_CHECK(msg.rfind(what, 0) == 0, "message does not start with '" << what << "': " << msg);
    TIERCC_CHECK(msg.find(needle) != std::string::npos, "message does not name '" << needle << "': " << msg);
    TIERCC_CHECK(took < limit, "the error took " << took.count() << " ms: " << msg);
    return took;
  }
  TIERCC_CHECK(false, "expected " << toString(code) << " naming '" << needle << "', but the wait succeeded");
  return {};
}

JobOptions job() {
  JobOptions jo;
  jo.env = {{"TIERCC_DEBUG", "WARN"}};
  jo.timeout = 90s;
  jo.failureGrace = 10s;
  return jo;
}

// --- the cases, each on a fresh domain ---

// Every rank writes its window and mailbox, raises a flag; every peer then reads them.
void windowBytesReachEveryPeer(Rank& r) {
  auto dom = r.domain("bytes");
  const int me = dom->localRank();
  TIERCC_CHECK(dom->size() == r.n && dom->windowBytes() == kWindow, "domain shape");
  fill(dom->window(me), kWindow, 100 + me);
  fill(dom->mailbox(me), Domain::kMailboxBytes, 200 + me);
  dom->signal(kStaged, 1);
  for (int p = 0; p < r.n; ++p) {
    dom->waitUntil(p, kStaged, 1, Deadline::after(20s), "bytes");
    TIERCC_CHECK(filled(dom->window(p), kWindow, 100 + p), "window of local rank " << p << " differs");
    TIERCC_CHECK(filled(dom->mailbox(p), Domain::kMailboxBytes, 200 + p), "mailbox of local rank " << p << " differs");
  }
  dom->signal(kReleased, 1);
  for (int p = 0; p < r.n; ++p) dom->waitUntil(p, kReleased, 1, Deadline::after(20s), "bytes");
}

// Rank 0 counts a flag through 2^32: it climbs in quarter steps to just below the wrap (with
// a barrier per step, since a wait compares within half the range), then one by one across
// it. A wait for any value at or before the flag returns, one for a later value does not.
void flagsAreMonotonicAcrossWrap(Rank& r) {
  auto dom = r.domain("wrap");
  const std::uint32_t climb[] = {0x40000000u, 0x80000000u, 0xC0000000u};
  for (int i = 0; i < 3; ++i) {
    if (r.rank == 0) dom->signal(1, climb[i]);
    else dom->waitUntil(0, 1, climb[i], Deadline::after(20s), "wrap");
    r.barrier("wrap-climb-" + std::to_string(i));
  }
  const std::uint32_t start = 0xFFFFFFF0u;
  const int steps = 40;  // ends at 0x17, past the wrap
  for (int i = 0; i < steps; ++i) {
    const std::uint32_t v = start + static_cast<std::uint32_t>(i);
    if (r.rank == 0) {
      dom->signal(1, v);
    } else {
      dom->waitUntil(0, 1, v, Deadline::after(20s), "wrap");
      dom->waitUntil(0, 1, v - 5, Deadline::after(20s), "wrap");  // passed already
    }
    if (i % 8 == 0) r.barrier("wrap-step-" + std::to_string(i));
  }
  r.barrier("wrap-done");
  if (r.rank != 0) {
    const std::uint32_t last = start + steps - 1;
    dom->waitUntil(0, 1, start, Deadline::after(1s), "wrap");  // huge, yet before the small last value
    expectError(ErrorCode::Timeout, "wrap", "rank 0", 3000ms, [&] {
      dom->waitUntil(0, 1, last + 1, Deadline::after(100ms), "wrap");
    });
  }
  r.barrier("wrap-checked");
}

// The collectives' round protocol: stage random ranges, read every peer's, release; a rank
// rewrites its window only after every peer released the previous round.
void manyRoundsOfRandomSizes(Rank& r) {
  auto dom = r.domain("rounds");
  const int me = dom->localRank();
  for (std::uint32_t epoch = 1; epoch <= 300; ++epoch) {
    for (int p = 0; p < r.n; ++p)
      if (p != me) dom->waitUntil(p, kReleased, epoch - 1, Deadline::after(20s), "round");
    // Every rank derives every rank's ranges from (epoch, rank): one or two ranges, sometimes
    // empty, sometimes the whole window, sometimes the same bytes as before.
    auto ranges = [&](int who) {
      std::mt19937_64 rng(epoch * 1000003ull + static_cast<std::uint64_t>(who));
      std::vector<std::pair<std::size_t, std::size_t>> out;
      const int shape = static_cast<int>(rng() % 6);
      if (shape == 0) return out;
      if (shape == 1) return decltype(out){{0, kWindow}};
      for (int i = 0; i < (shape == 2 ? 2 : 1); ++i) {
        std::size_t len = 1 + rng() % (shape == 3 ? 64 : kWindow / 2);
        std::size_t off = rng() % (kWindow - len + 1);
        out.push_back({off, len});
      }
      return out;
    };
    auto seed = [&](int who, std::size_t i) { return (epoch % 7 == 0 ? epoch - 1 : epoch) * 31ull + who * 7ull + i; };
    auto mine = ranges(me);
    for (std::size_t i = 0; i < mine.size(); ++i) fill(dom->window(me) + mine[i].first, mine[i].second, seed(me, i));
    dom->signal(kStaged, epoch);
    for (int p = 0; p < r.n; ++p) {
      dom->waitUntil(p, kStaged, epoch, Deadline::after(20s), "round");
      auto theirs = ranges(p);
      for (std::size_t i = 0; i < theirs.size(); ++i)
        if (!(theirs.size() == 2 && i == 0 && theirs[1].first < theirs[0].first + theirs[0].second &&
              theirs[0].first < theirs[1].first + theirs[1].second))  // the second overwrote part of the first
          TIERCC_CHECK(filled(dom->window(p) + theirs[i].first, theirs[i].second, seed(p, i)),
                       "round " << epoch << ": local rank " << p << " range " << theirs[i].first << "+"
                                << theirs[i].second << " differs");
    }
    dom->signal(kReleased, epoch);
  }
  for (int p = 0; p < r.n; ++p) dom->waitUntil(p, kReleased, 300, Deadline::after(20s), "round");
}

// Rank 0 signals each round once every peer has taken the last one and has then gone to sleep
// on the flag (past the spin and the yield): every wake must come from the signal, not from the wait's slice running
// out (50 ms on shm). A lost wake-up makes a round take the whole slice; a loaded machine may delay a few rounds as
// long, so the check allows up to a quarter of them.
void sleepersAreWokenBySignals(Rank& r) {
  auto dom = r.domain("sleepers");
  constexpr int kRounds = 24;
  int slow = 0;
  for (std::uint32_t round = 1; round <= kRounds; ++round) {
    if (r.rank == 0) {
      for (int p = 1; p < r.n; ++p) dom->waitUntil(p, 4, round - 1, Deadline::after(20s), "sleepers");
      std::this_thread::sleep_for(3ms);
      dom->signal(3, round);
      continue;
    }
    const auto start = SteadyClock::now();
    dom->waitUntil(0, 3, round, Deadline::after(20s), "sleepers");
    if (SteadyClock::now() - start >= 40ms) ++slow;
    dom->signal(4, round);  // this rank waits again: rank 0 may go on
  }
  TIERCC_CHECK(slow <= kRounds / 4, slow << " of " << kRounds << " sleeping waits lasted 40 ms or more: "
                                         << "signals do not wake sleepers");
  r.barrier("sleepers-done");
}

// Nobody raises flag 5: the wait ends at its deadline, naming the peer and the flag.
void waitTimesOutAtItsDeadline(Rank& r) {
  auto dom = r.domain("timeout");
  if (r.rank == 0) {
    auto took = expectError(ErrorCode::Timeout, "timeout case", "rank 1", 3000ms, [&] {
      dom->waitUntil(1, 5, 1, Deadline::after(300ms), "timeout case");
    });
    TIERCC_CHECK(took >= 290ms, "the wait ended " << took.count() << " ms after it began, before its deadline");
  }
  r.barrier("timeout-done");
}

// abort() from another thread ends a wait with Aborted; later waits fail at once.
void abortEndsAWait(Rank& r) {
  auto dom = r.domain("abort");
  if (r.rank == 0) {
    std::thread aborter([&] {
      std::this_thread::sleep_for(100ms);
      dom->abort();
    });
    expectError(ErrorCode::Aborted, "abort case", "aborted", 5000ms, [&] {
      dom->waitUntil(1, 6, 1, Deadline::after(20s), "abort case");
    });
    aborter.join();
    expectError(ErrorCode::Aborted, "abort case", "aborted", 500ms, [&] {
      dom->waitUntil(2 % r.n, 6, 1, Deadline::after(20s), "abort case");
    });
  }
  r.barrier("abort-done");
}

// The last rank poisons its domain: the others' waits on it fail with PeerFailure quoting why.
void poisonReachesThePeers(Rank& r) {
  auto dom = r.domain("poison");
  const int last = r.n - 1;
  r.barrier("poison-ready");
  if (r.rank == last) {
    dom->poison("injected failure 42 in rank " + std::to_string(last));
  } else {
    expectError(ErrorCode::PeerFailure, "poison case", "injected failure 42", 10000ms, [&] {
      dom->waitUntil(last, kStaged, 1, Deadline::after(20s), "poison case");
    });
  }
  r.barrier("poison-done");
}

// Rank 1 dies (no destructor, no goodbye) while the others wait on it: PeerFailure naming it,
// not a hang. Last case of its job: rank 1 is gone afterwards.
void deadPeerFailsTheWait(Rank& r) {
  auto dom = r.domain("death");
  r.barrier("death-ready");
  if (r.rank == 1) {
    std::this_thread::sleep_for(200ms);  // let the others start waiting
    _exit(0);
  }
  expectError(ErrorCode::PeerFailure, "death case", "rank 1", 15000ms, [&] {
    dom->waitUntil(1, kStaged, 1, Deadline::after(30s), "death case");
  });
}

// No shared-memory segment of this job is left behind (names are unlinked once mapped).
void expectNoSegmentsLeft(pid_t job) {
  glob_t g{};
  int rc = ::glob(("/dev/shm" + segmentPrefix(job) + "*").c_str(), 0, nullptr, &g);
  std::size_t left = rc == 0 ? g.gl_pathc : 0;
  std::string first = left ? g.gl_pathv[0] : "";
  globfree(&g);
  EXPECT_EQ(left, 0u) << "leftover segment " << first;
}

class DomainConformance : public ::testing::TestWithParam<std::string> {
 protected:
  const std::string& backend() const { return GetParam(); }
};

// Three ranks (odd on purpose): the cooperative cases, one domain each, in one job.
TEST_P(DomainConformance, CooperativeCases) {
  std::string name = backend();
  JobResult result = runRanks(3, [&](int rank, const std::string& addr) {
    Rank r = join(name, rank, 3, addr);
    windowBytesReachEveryPeer(r);
    flagsAreMonotonicAcrossWrap(r);
    manyRoundsOfRandomSizes(r);
    sleepersAreWokenBySignals(r);
    waitTimesOutAtItsDeadline(r);
    abortEndsAWait(r);
  }, job());
  EXPECT_TRUE(result.ok()) << result.report();
  expectNoSegmentsLeft(getpid());
}

// Two ranks: the smallest domain with a peer, a common shape for the emulated backend.
TEST_P(DomainConformance, TwoRanksManyRounds) {
  std::string name = backend();
  JobResult result = runRanks(2, [&](int rank, const std::string& addr) {
    Rank r = join(name, rank, 2, addr);
    windowBytesReachEveryPeer(r);
    manyRoundsOfRandomSizes(r);
  }, job());
  EXPECT_TRUE(result.ok()) << result.report();
  expectNoSegmentsLeft(getpid());
}

// Failures: a poisoned peer, then a dead one.
TEST_P(DomainConformance, PoisonAndDeath) {
  std::string name = backend();
  JobResult result = runRanks(3, [&](int rank, const std::string& addr) {
    Rank r = join(name, rank, 3, addr);
    poisonReachesThePeers(r);
    deadPeerFailsTheWait(r);
  }, job());
  EXPECT_TRUE(result.ok()) << result.report();
  expectNoSegmentsLeft(getpid());
}

INSTANTIATE_TEST_SUITE_P(Backends, DomainConformance, ::testing::Values("shm", "shm-fenced", "emulated"),
                         [](const auto& param) {
                           std::string name = param.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

// The diff that decides which bytes the emulated backend sends.
TEST(WindowDiff, FindsExactlyTheChangedBytes) {
  std::vector<std::byte> before(30000), now(30000);  // blocks 0..7, the last one partial
  EXPECT_TRUE(changedRanges(now.data(), before.data(), now.size()).empty());
  now[5] = std::byte{1};                 // block 0
  now[4095] = now[4096] = std::byte{2};  // across blocks 0 and 1: one run
  now[12300] = std::byte{3};             // block 3 alone
  now[29999] = std::byte{4};             // the last, partial block
  auto r = changedRanges(now.data(), before.data(), now.size());
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].offset, 5u);
  EXPECT_EQ(r[0].len, 4097u - 5u);
  EXPECT_EQ(r[1].offset, 12300u);
  EXPECT_EQ(r[1].len, 1u);
  EXPECT_EQ(r[2].offset, 29999u);
  EXPECT_EQ(r[2].len, 1u);
  // Changed blocks in a row make one range, unchanged bytes inside it included.
  now[25000] = std::byte{5};  // block 6, next to block 7
  r = changedRanges(now.data(), before.data(), now.size());
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[2].offset, 25000u);
  EXPECT_EQ(r[2].len, 5000u);
}

}  // namespace
}  // namespace tiercc::test
