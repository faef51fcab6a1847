// Shrink: after a rank dies, the survivors agree on who is left and go on in a communicator of
// their own, re-planned for its topology, with exact results; or drop the failed rank's whole
// domain. Through the C++ API and the C ABI.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>

#include "tests/support/multiprocess.hpp"
#include "tiercc/tiercc.h"
#include "tiercc/tiercc.hpp"

namespace tiercc::test {
namespace {

// One count of f32 in each of the metrics' size classes (<= 1 KiB, <= 64 KiB, <= 1 MiB,
// <= 16 MiB, > 16 MiB), plus the smallest, each run kRepeats times.
constexpr std::array<std::size_t, 6> kCounts{1, 250, 16000, 250000, 1 << 20, (17 << 20) / 4};
constexpr int kRepeats = 100;

JobOptions twoDomainsOfFour() {
  JobOptions jo;
  jo.env = {{"TIERCC_DOMAIN_SIZE", "4"},
            {"TIERCC_TIMEOUT", "30s"},
            {"TIERCC_HEARTBEAT_PERIOD", "100ms"},
            {"TIERCC_HEARTBEAT_TIMEOUT", "1500ms"},
            {"TIERCC_DEBUG", "NONE"}};
  jo.timeout = std::chrono::seconds(240);
  jo.failureGrace = jo.timeout;  // rank 5's death is the test: the survivors get all the time
  return jo;
}

// The parent fails, naming the dead rank: the survivors know before they shrink. In the barrier
// the dead rank took part in before it died (UCX may fail a send to a peer that has just left,
// though the peer had it), or in the allreduce after it.
void expectTheParentFails(Communicator& comm, int dead) {
  std::vector<float> buf(1024, 1.0f);
  try {
    comm.barrier();
    comm.allreduce(buf.data(), buf.data(), buf.size(), DataType::F32, ReduceOp::Sum);
    TIERCC_CHECK(false, "allreduce succeeded although rank " << dead << " is dead");
  } catch (const Error& e) {
    TIERCC_CHECK(e.code() == ErrorCode::PeerFailure, toString(e.code()) << ": " << e.what());
    const std::string needle = "rank " + std::to_string(dead) + " (";
    TIERCC_CHECK(std::string(e.what()).find(needle) != std::string::npos,
                 "does not name rank " << dead << ": " << e.what());
  }
}

// kRepeats allreduces of every count: each member adds (its parent rank + 1) + i % 5 per
// element i, so the sum is exact in f32 and says which parent ranks took part.
void allreducesAreExact(Communicator& comm, const std::vector<int>& parentRanks, int myParentRank) {
  std::int64_t ranksTerm = 0;
  for (int r : parentRanks) ranksTerm += r + 1;
  const auto n = static_cast<std::int64_t>(parentRanks.size());
  std::vector<float> send(kCounts.back()), recv(kCounts.back());
  for (std::size_t i = 0; i < send.size(); ++i)
    send[i] = static_cast<float>(myParentRank + 1 + static_cast<int>(i % 5));
  for (std::size_t count : kCounts)
    for (int repeat = 0; repeat < kRepeats; ++repeat) {
      std::fill(recv.begin(), recv.begin() + static_cast<std::ptrdiff_t>(count), -1.0f);
      comm.allreduce(send.data(), recv.data(), count, DataType::F32, ReduceOp::Sum);
      for (std::size_t i = 0; i < count; ++i) {
        const float want = static_cast<float>(ranksTerm + n * static_cast<std::int64_t>(i % 5));
        TIERCC_CHECK(recv[i] == want, "count " << count << ", repeat " << repeat << ", element " << i << ": " << recv[i]
                                               << " instead of " << want);
      }
    }
}

// A 2x4 job whose rank 5 is killed; the survivors see the parent fail, shrink with `which`,
// and hand the result to `goOn`. Every survivor must end well.
void killRankFiveThenShrink(Communicator::Shrink which,
                            const std::function<void(int rank, Communicator& survivors)>& goOn) {
  JobResult result = runRanks(
      8,
      [&](int rank, const std::string& store) {
        Communicator comm(store, 8, rank);
        if (rank == 5) {
          comm.barrier();
          kill(getpid(), SIGKILL);
        }
        expectTheParentFails(comm, 5);
        Communicator survivors = comm.shrink(which);
        goOn(rank, survivors);
      },
      twoDomainsOfFour());
  ASSERT_EQ(result.ranks.size(), 8u);
  for (int r = 0; r < 8; ++r) {
    if (r == 5) continue;
    EXPECT_TRUE(result.ranks[r].ok()) << result.report();
  }
  EXPECT_TRUE(WIFSIGNALED(result.ranks[5].status)) << result.ranks[5].describe();
}

// The seven survivors shrink to 7 ranks (domains of 4 and 3), in their old order, and run every
// size class exactly.
TEST(Shrink, SurvivorsOfAKilledRankGoOnWithExactResults) {
  killRankFiveThenShrink(Communicator::Shrink::FailedRanks, [](int rank, Communicator& survivors) {
    TIERCC_CHECK(survivors.valid(), "rank " << rank << " was left out");
    TIERCC_CHECK(survivors.size() == 7, "size " << survivors.size());
    TIERCC_CHECK(survivors.rank() == (rank < 5 ? rank : rank - 1), "rank " << rank << " became " << survivors.rank());
    TIERCC_CHECK(survivors.numDomains() == 2, survivors.numDomains() << " domains");
    TIERCC_CHECK(survivors.domainSize() == (rank < 4 ? 4 : 3), "domain size " << survivors.domainSize());
    allreducesAreExact(survivors, {0, 1, 2, 3, 4, 6, 7}, rank);
    survivors.barrier();
  });
}

// Dropping the failed rank's domain: ranks 4, 6 and 7 are left out (an empty communicator),
// ranks 0-3 go on as one domain.
TEST(Shrink, DroppingTheFailedDomainLeavesItsSurvivorsOut) {
  killRankFiveThenShrink(Communicator::Shrink::FailedDomains, [](int rank, Communicator& survivors) {
    if (rank >= 4) {
      TIERCC_CHECK(!survivors.valid(), "rank " << rank << " of the failed domain was kept");
      return;
    }
    TIERCC_CHECK(
        survivors.size() == 4 && survivors.rank() == rank && survivors.numDomains() == 1,
        "rank " << survivors.rank() << " of " << survivors.size() << " in " << survivors.numDomains() << " domains");
    allreducesAreExact(survivors, {0, 1, 2, 3}, rank);
  });
}

// A healthy communicator shrinks to all of itself; through the C ABI, with bad flags refused.
TEST(Shrink, HealthyCommunicatorShrinksToItselfThroughTheCApi) {
  JobOptions jo;
  jo.env = {{"TIERCC_DOMAIN_SIZE", "1"}, {"TIERCC_HEARTBEAT_PERIOD", "100ms"}};
  JobResult result = runRanks(
      3,
      [](int rank, const std::string& store) {
        tiercc_comm_t comm = nullptr, small = nullptr;
        TIERCC_CHECK(tiercc_comm_init_rank(&comm, store.c_str(), 3, rank) == tiercc_success, tiercc_get_last_error());
        TIERCC_CHECK(tiercc_comm_shrink(comm, 6, &small) == tiercc_invalid_argument, "flags 6 were accepted");
        TIERCC_CHECK(std::string(tiercc_get_last_error()).find("unknown flags") != std::string::npos,
                     tiercc_get_last_error());
        TIERCC_CHECK(small == nullptr, "a refused shrink returned a communicator");
        TIERCC_CHECK(tiercc_comm_shrink(comm, TIERCC_SHRINK_FAILED_DOMAINS, &small) == tiercc_success,
                     tiercc_get_last_error());
        int size = 0, me = -1;
        TIERCC_CHECK(small && tiercc_comm_size(small, &size) == tiercc_success && size == 3, "size " << size);
        TIERCC_CHECK(tiercc_comm_rank(small, &me) == tiercc_success && me == rank, "rank " << me);
        float x = static_cast<float>(rank + 1);
        TIERCC_CHECK(tiercc_allreduce(&x, &x, 1, tiercc_f32, tiercc_sum, small) == tiercc_success,
                     tiercc_get_last_error());
        TIERCC_CHECK(x == 6.0f, "sum " << x);
        TIERCC_CHECK(tiercc_comm_destroy(small) == tiercc_success, tiercc_get_last_error());
        TIERCC_CHECK(tiercc_comm_destroy(comm) == tiercc_success, tiercc_get_last_error());
      },
      jo);
  EXPECT_TRUE(result.ok()) << result.report();
}

}  // namespace
}  // namespace tiercc::test
