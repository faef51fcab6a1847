// Failures end in bounded time with an error that names the rank: a peer that dies on either
// tier, a peer that never comes (timeout), and abort.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <thread>
#include <vector>

#include "tests/support/free_ports.hpp"
#include "tests/support/multiprocess.hpp"
#include "tests/support/shm_entries.hpp"
#include "tests/support/transport_skip.hpp"
#include "tiercc/tiercc.hpp"

namespace tiercc::test {
namespace {

using Clock = std::chrono::steady_clock;

// Runs an allreduce that must fail with `code`, within `limit`, naming `needle`. With
// `barrierFirst`, a barrier before it, in which the failure may show as well: a victim that dies
// right after its own part of that barrier can fail it on the survivors (UCX fails a send whose
// peer closed the connection, even when the peer had received it).
void expectAllreduceFails(Communicator& comm, ErrorCode code, const std::string& needle, std::chrono::seconds limit,
                          bool barrierFirst = false) {
  std::vector<float> buf(1 << 16, 1.0f);
  auto start = Clock::now();
  try {
    if (barrierFirst) comm.barrier();
    comm.allreduce(buf.data(), buf.data(), buf.size(), DataType::F32, ReduceOp::Sum);
  } catch (const Error& e) {
    auto took = Clock::now() - start;
    std::string msg = e.what();
    TIERCC_CHECK(e.code() == code, "error code " << toString(e.code()) << ": " << msg);
    TIERCC_CHECK(msg.find(needle) != std::string::npos, "message does not name '" << needle << "': " << msg);
    TIERCC_CHECK(took < limit, "failure took " << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms");
    return;
  }
  TIERCC_CHECK(false, "allreduce succeeded although a peer is gone");
}

// Stops this rank (SIGSTOP: alive, but silent); someone must end it once stopped: a child that
// kills it after `seconds`, outliving the survivors' checks.
void stopUntilKilled(unsigned seconds) {
  pid_t self = getpid();
  if (fork() == 0) {
    sleep(seconds);
    kill(self, SIGKILL);
    _exit(0);
  }
  raise(SIGSTOP);
}

// `transport`: TIERCC_TRANSPORT for the job; null, the default.
JobOptions failureJob(int domainSize, const char* transport = nullptr) {
  JobOptions jo;
  jo.env = {{"TIERCC_TIMEOUT", "30s"}, {"TIERCC_DEBUG", "NONE"}};
  if (domainSize) jo.env.push_back({"TIERCC_DOMAIN_SIZE", std::to_string(domainSize)});
  if (transport) jo.env.push_back({"TIERCC_TRANSPORT", transport});
  jo.timeout = std::chrono::seconds(60);
  return jo;
}

// Rank 1 shares rank 0's domain and exits after init: rank 0 learns it on the shm tier.
TEST(Failure, PeerDiesInsideDomain) {
  JobResult result = runRanks(2, [](int rank, const std::string& store) {
    Communicator comm(store, 2, rank);
    if (rank == 1) _exit(0);
    expectAllreduceFails(comm, ErrorCode::PeerFailure, "rank 1", std::chrono::seconds(10));
  }, failureJob(0));
  EXPECT_TRUE(result.ok()) << result.report();
}

// Rank 2 is alone in domain 1 and is killed: rank 0 (its rail peer) sees the connection close,
// and rank 1, which waits on rank 0 inside the domain, hears of it from rank 0: both name rank 2.
void peerKilledAcrossDomains(const char* transport) {
  JobResult result = runRanks(
      3,
      [](int rank, const std::string& store) {
        Communicator comm(store, 3, rank);
        if (rank == 2) {
          comm.barrier();
          kill(getpid(), SIGKILL);
        }
        expectAllreduceFails(comm, ErrorCode::PeerFailure, "rank 2", std::chrono::seconds(10), true);
        // The communicator stays failed: later calls report the same error at once.
        expectAllreduceFails(comm, ErrorCode::PeerFailure, "rank", std::chrono::seconds(1));
      },
      failureJob(2, transport));
  ASSERT_EQ(result.ranks.size(), 3u);
  EXPECT_TRUE(result.ranks[0].ok()) << result.report();
  EXPECT_TRUE(result.ranks[1].ok()) << result.report();
  EXPECT_TRUE(WIFSIGNALED(result.ranks[2].status));
}
TEST(Failure, PeerKilledAcrossDomains) { peerKilledAcrossDomains(nullptr); }
TEST(Failure, PeerKilledAcrossDomainsOverUcx) {
  TIERCC_SKIP_WITHOUT_TRANSPORT("ucx");
  peerKilledAcrossDomains("ucx");
}

// 2x2, rank 3 killed: ranks 1 (its rail peer) and 2 (its domain peer) see it; rank 0 only sees
// rank 2 stop. Every survivor must still name rank 3, from the verdict the first one published.
TEST(Failure, EverySurvivorNamesTheRootCauseNotTheMessenger) {
  JobResult result = runRanks(4, [](int rank, const std::string& store) {
    Communicator comm(store, 4, rank);
    if (rank == 3) {
      comm.barrier();
      kill(getpid(), SIGKILL);
    }
    expectAllreduceFails(comm, ErrorCode::PeerFailure, "rank 3 (domain 1", std::chrono::seconds(10), true);
  }, failureJob(2));
  ASSERT_EQ(result.ranks.size(), 4u);
  for (int r = 0; r < 3; ++r) EXPECT_TRUE(result.ranks[r].ok()) << result.report();
  EXPECT_TRUE(WIFSIGNALED(result.ranks[3].status));
}

// A rank that never calls the collective: the others time out, naming whom they waited for.
TEST(Failure, TimeoutNamesTheMissingRank) {
  JobOptions jo = failureJob(0);
  jo.env.push_back({"TIERCC_TIMEOUT", "2s"});
  JobResult result = runRanks(2, [](int rank, const std::string& store) {
    Communicator comm(store, 2, rank);
    if (rank == 1) {
      sleep(4);  // alive, but not taking part
      return;
    }
    expectAllreduceFails(comm, ErrorCode::Timeout, "rank 1", std::chrono::seconds(4));
  }, jo);
  EXPECT_TRUE(result.ok()) << result.report();
}

TEST(Failure, AbortWakesAWaitingRankAndStaysAborted) {
  JobResult result = runRanks(2, [](int rank, const std::string& store) {
    Communicator comm(store, 2, rank);
    if (rank == 1) {
      sleep(3);
      return;
    }
    std::vector<float> buf(1024, 1.0f);
    Work w = comm.allreduceAsync(buf.data(), buf.data(), buf.size(), DataType::F32, ReduceOp::Sum);
    usleep(200 * 1000);
    auto start = Clock::now();
    comm.abort();
    try {
      w.wait(std::chrono::seconds(5));
      TIERCC_CHECK(false, "aborted allreduce completed");
    } catch (const Error& e) {
      TIERCC_CHECK(e.code() == ErrorCode::Aborted, "code " << toString(e.code()) << ": " << e.what());
    }
    TIERCC_CHECK(Clock::now() - start < std::chrono::seconds(2), "abort took too long");
    try {
      comm.barrier();
      TIERCC_CHECK(false, "barrier after abort succeeded");
    } catch (const Error& e) {
      TIERCC_CHECK(e.code() == ErrorCode::Aborted, "code after abort " << toString(e.code()));
    }
  }, failureJob(0));
  EXPECT_TRUE(result.ok()) << result.report();
}

// A rank that stops answering (SIGSTOP: alive, but silent) is named by the failure detector
// within its heartbeat timeout, long before the collective's deadline.
TEST(Failure, StoppedRankIsNamedByTheFailureDetector) {
  JobOptions jo = failureJob(0);
  jo.env.push_back({"TIERCC_HEARTBEAT_PERIOD", "100ms"});
  jo.env.push_back({"TIERCC_HEARTBEAT_TIMEOUT", "1500ms"});
  JobResult result = runRanks(2, [](int rank, const std::string& store) {
    Communicator comm(store, 2, rank);
    comm.barrier();
    if (rank == 1) stopUntilKilled(8);
    expectAllreduceFails(comm, ErrorCode::PeerFailure, "rank 1 (domain 0, local rank 1) stopped answering",
                         std::chrono::seconds(6));
  }, jo);
  ASSERT_EQ(result.ranks.size(), 2u);
  EXPECT_TRUE(result.ranks[0].ok()) << result.report();
  EXPECT_TRUE(WIFSIGNALED(result.ranks[1].status)) << result.ranks[1].describe();
}

// 2x4, rank 5 stopped: its neighbours (4, 6, 1) watch it; the other four do not, and learn of it
// from the verdict their detectors find in the store. All seven raise, naming rank 5.
TEST(Failure, StoppedRankIsNamedOnRanksThatDoNotWatchIt) {
  JobOptions jo = failureJob(4);
  jo.env.push_back({"TIERCC_HEARTBEAT_PERIOD", "100ms"});
  jo.env.push_back({"TIERCC_HEARTBEAT_TIMEOUT", "1500ms"});
  JobResult result = runRanks(8, [](int rank, const std::string& store) {
    Communicator comm(store, 8, rank);
    comm.barrier();
    if (rank == 5) stopUntilKilled(5);  // past the survivors' checks (1.5 s timeout + a period)
    expectAllreduceFails(comm, ErrorCode::PeerFailure, "rank 5 (domain 1", std::chrono::seconds(6));
  }, jo);
  ASSERT_EQ(result.ranks.size(), 8u);
  for (int r = 0; r < 8; ++r) {
    if (r == 5) continue;
    EXPECT_TRUE(result.ranks[r].ok()) << result.report();
  }
}

// A rank that aborts while the others wait on it stays alive (its heartbeat goes on): they hear
// of the abort from the verdict it published, within a heartbeat period, naming it.
TEST(Failure, AbortTellsThePeersWithinAPeriod) {
  JobOptions jo = failureJob(2);
  jo.env.push_back({"TIERCC_HEARTBEAT_PERIOD", "100ms"});
  JobResult result = runRanks(4, [](int rank, const std::string& store) {
    Communicator comm(store, 4, rank);
    comm.barrier();
    if (rank == 3) {
      usleep(200 * 1000);  // the others are waiting in the allreduce
      comm.abort();
      sleep(3);
      return;
    }
    expectAllreduceFails(comm, ErrorCode::PeerFailure, "rank 3 (domain 1, local rank 1) aborted its communicator",
                         std::chrono::seconds(2));
  }, jo);
  EXPECT_TRUE(result.ok()) << result.report();
}

// Work::wait(timeout) gives up, then abort() stops the operation: when abort() returns, the
// operation has ended (its Work is done, with Aborted), so the caller may free its buffers. In a
// domain (shm) and across domains (the transport).
void abortAfterWaitTimeout(int domainSize, const char* transport = nullptr) {
  JobResult result = runRanks(
      2,
      [](int rank, const std::string& store) {
        Communicator comm(store, 2, rank);
        comm.barrier();
        if (rank == 1) {
          sleep(4);  // never joins the allreduce
          return;
        }
        std::vector<float> send(1 << 22, 1.0f), recv(1 << 22, 0.0f);
        Work w = comm.allreduceAsync(send.data(), recv.data(), send.size(), DataType::F32, ReduceOp::Sum);
        try {
          w.wait(std::chrono::milliseconds(300));
          TIERCC_CHECK(false, "the allreduce finished without rank 1");
        } catch (const Error& e) {
          TIERCC_CHECK(e.code() == ErrorCode::Timeout, toString(e.code()) << ": " << e.what());
        }
        const auto start = Clock::now();
        comm.abort();
        TIERCC_CHECK(Clock::now() - start < std::chrono::seconds(5), "abort took too long");
        try {
          const bool done = w.test();  // no waiting: the operation must have ended already
          TIERCC_CHECK(false, "the aborted allreduce " << (done ? "succeeded" : "still runs after abort() returned"));
        } catch (const Error& e) {
          TIERCC_CHECK(e.code() == ErrorCode::Aborted, toString(e.code()) << ": " << e.what());
        }
      },
      failureJob(domainSize, transport));
  EXPECT_TRUE(result.ok()) << result.report();
}

TEST(Failure, AbortAfterAWaitTimeoutEndsTheOperationInADomain) { abortAfterWaitTimeout(0); }
TEST(Failure, AbortAfterAWaitTimeoutEndsTheOperationAcrossDomains) { abortAfterWaitTimeout(1); }
TEST(Failure, AbortAfterAWaitTimeoutEndsTheOperationAcrossDomainsOverUcx) {
  TIERCC_SKIP_WITHOUT_TRANSPORT("ucx");
  abortAfterWaitTimeout(1, "ucx");
}

// A blocking allreduce on one thread, abort() from another, then the communicator destroyed:
// once abort() returns the operation has ended (its buffers are not written again) and the
// blocked thread returns with Aborted, so the destructor frees nothing it still uses (ASan and
// TSan run this test: scripts/sanitize.sh). In a domain and across.
void abortABlockedThreadThenDestroy(int domainSize) {
  JobResult result = runRanks(2, [](int rank, const std::string& store) {
    auto comm = std::make_unique<Communicator>(store, 2, rank);
    comm->barrier();
    if (rank == 1) {
      sleep(3);  // never joins the allreduce
      return;
    }
    std::vector<float> send(1 << 20, 1.0f), recv(1 << 20, 0.0f);
    std::atomic<int> code{-1};
    std::thread blocked([&] {
      try {
        comm->allreduce(send.data(), recv.data(), send.size(), DataType::F32, ReduceOp::Sum);
        code = static_cast<int>(ErrorCode::Ok);
      } catch (const Error& e) {
        code = static_cast<int>(e.code());
      }
    });
    usleep(300 * 1000);  // the allreduce waits on rank 1
    comm->abort();
    // abort() has returned: the operation has ended and touches the buffers no more.
    std::fill(recv.begin(), recv.end(), 7.0f);
    blocked.join();
    comm.reset();
    const int seen = code.load();
    TIERCC_CHECK(seen == static_cast<int>(ErrorCode::Aborted),
                 "the blocked allreduce ended with " << (seen < 0 ? "nothing" : toString(static_cast<ErrorCode>(seen))));
    for (float v : recv) TIERCC_CHECK(v == 7.0f, "the receive buffer was written after abort() returned: " << v);
  }, failureJob(domainSize));
  EXPECT_TRUE(result.ok()) << result.report();
}

TEST(Failure, AbortFromAnotherThreadThenDestroyInADomain) { abortABlockedThreadThenDestroy(0); }
TEST(Failure, AbortFromAnotherThreadThenDestroyAcrossDomains) { abortABlockedThreadThenDestroy(1); }

// 2x4 with the store hosted by rank 0 (as under mpirun or an explicit init), whose process then
// dies or stops: every survivor raises, naming rank 0 and the store, the ones that were talking
// to it at once and the others through their failure detectors, whose store calls fail (killed)
// or stop answering within the heartbeat timeout (stopped). Default heartbeat settings.
void storeHostFails(bool kill) {
  const std::uint16_t port = freePortsBelowEphemeral(1);  // for a store rank 0 hosts
  ASSERT_NE(port, 0) << "no free port for the store";
  JobOptions jo = failureJob(4);
  jo.env.push_back({"TIERCC_TIMEOUT", "60s"});  // far beyond the bound: the detectors must see it
  JobResult result = runRanks(8, [port, kill](int rank, const std::string&) {
    Communicator comm("127.0.0.1:" + std::to_string(port), 8, rank);
    if (rank == 0) {
      comm.barrier();
      if (kill) ::kill(getpid(), SIGKILL);
      stopUntilKilled(9);  // past the survivors' checks
    }
    expectAllreduceFails(comm, ErrorCode::PeerFailure, "rank 0 (domain 0, local rank 0)",
                         std::chrono::seconds(kill ? 3 : 7), true);
  }, jo);
  ASSERT_EQ(result.ranks.size(), 8u);
  for (int r = 1; r < 8; ++r) EXPECT_TRUE(result.ranks[r].ok()) << result.report();
  EXPECT_TRUE(WIFSIGNALED(result.ranks[0].status)) << result.ranks[0].describe();
}

TEST(Failure, KilledStoreHostIsNamedByEverySurvivor) { storeHostFails(true); }
TEST(Failure, StoppedStoreHostIsNamedByEverySurvivorWithinTheHeartbeatTimeout) { storeHostFails(false); }

// Ranks with different settings all stop at init with the same clear error, none waits.
TEST(Failure, RanksThatDisagreeOnSettingsStopAtInit) {
  JobOptions jo = failureJob(0);
  jo.rankEnv = [](int r) {
    return std::vector<std::pair<std::string, std::string>>{{"TIERCC_SHM_CHUNK", r == 1 ? "8192" : "4096"}};
  };
  JobResult result = runRanks(2, [](int rank, const std::string& store) {
    auto start = Clock::now();
    try {
      Communicator comm(store, 2, rank);
      TIERCC_CHECK(false, "ranks with different TIERCC_SHM_CHUNK were accepted");
    } catch (const Error& e) {
      TIERCC_CHECK(e.code() == ErrorCode::InvalidArgument, toString(e.code()) << ": " << e.what());
      TIERCC_CHECK(std::string(e.what()).find("shm_chunk=8192") != std::string::npos, e.what());
    }
    TIERCC_CHECK(Clock::now() - start < std::chrono::seconds(10), "init took too long to fail");
  }, jo);
  EXPECT_TRUE(result.ok()) << result.report();
}

// Segments are unlinked once mapped: nothing of this job is left in /dev/shm, even after a crash.
// The ranks print their segment prefixes; other tests may create segments meanwhile.
TEST(Failure, NoSharedMemoryLeftBehind) {
  JobResult result = runRanks(3, [](int rank, const std::string& store) {
    Communicator comm(store, 3, rank);
    comm.barrier();
    printShmPrefixes();
    if (rank == 2) abort();  // crash without any cleanup
  }, failureJob(0));
  EXPECT_TRUE(result.ranks[0].ok() && result.ranks[1].ok()) << result.report();
  bool sawPrefix = false;
  EXPECT_EQ(leftInDevShm(result, sawPrefix), "") << "left in /dev/shm";
  EXPECT_TRUE(sawPrefix) << "no rank reported its segment prefix\n" << result.report();
}

}  // namespace
}  // namespace tiercc::test
