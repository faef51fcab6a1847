// The unique id (NCCL's pattern): one rank makes it, the program hands it to every rank, and
// every rank joins with it. Here the ranks hand it over through the test's own store, as an
// MPI program would with MPI_Bcast (tests/mpi runs that under mpirun).
#include "bootstrap/unique_id.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "tests/support/multiprocess.hpp"
#include "tiercc/tiercc.h"
#include "tiercc/tiercc.hpp"

namespace tiercc::test {
namespace {

using Clock = std::chrono::steady_clock;

// Loopback only: a test sends nothing to this machine's other addresses.
JobOptions idJob(int domainSize) {
  JobOptions jo;
  jo.env = {{"TIERCC_BOOTSTRAP_ADDR", "127.0.0.1"}, {"TIERCC_TIMEOUT", "30s"}, {"TIERCC_DEBUG", "NONE"}};
  if (domainSize) jo.env.push_back({"TIERCC_DOMAIN_SIZE", std::to_string(domainSize)});
  jo.timeout = std::chrono::seconds(60);
  return jo;
}

// Rank 0 makes an id and publishes it under `key` in the job's store; every rank returns it.
UniqueId handOut(int rank, const std::string& storeAddr, const std::string& key) {
  auto store = connectJobStore(storeAddr, std::chrono::seconds(10));
  UniqueId id;
  if (rank == 0) {
    id = UniqueId::create();
    store->set(key, Bytes(id.bytes.begin(), id.bytes.end()));
  } else {
    const Bytes got = store->get(key, Deadline::after(std::chrono::seconds(20)));
    TIERCC_CHECK(got.size() == id.bytes.size(), "the id has " << got.size() << " bytes");
    std::copy(got.begin(), got.end(), id.bytes.begin());
  }
  return id;
}

void expectSum(Communicator& comm, std::size_t count, int round) {
  std::vector<float> buf(count);
  for (std::size_t i = 0; i < count; ++i) buf[i] = static_cast<float>(comm.rank() + round + static_cast<int>(i % 7));
  comm.allreduce(buf.data(), buf.data(), count, DataType::F32, ReduceOp::Sum);
  const int n = comm.size();
  for (std::size_t i = 0; i < count; ++i) {
    const float want = static_cast<float>(n * (n - 1) / 2 + n * (round + static_cast<int>(i % 7)));
    TIERCC_CHECK(buf[i] == want, "element " << i << " of " << count << " is " << buf[i] << ", want " << want);
  }
}

std::string errorOf(const UniqueIdBytes& bytes) {
  try {
    decodeUniqueId(bytes);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument) << e.what();
    return e.what();
  }
  return "(accepted)";
}

TEST(UniqueId, EncodesItsStoreAndNamespace) {
  UniqueIdFields f{"198.18.0.1", 40123, std::string(64, 'a'), std::string(32, '7')};
  const UniqueIdFields back = decodeUniqueId(encodeUniqueId(f));
  EXPECT_EQ(back.host, f.host);
  EXPECT_EQ(back.port, f.port);
  EXPECT_EQ(back.secret, f.secret);
  EXPECT_EQ(back.nonce, f.nonce);
}

TEST(UniqueId, IdsThatAreNotOneAreRefusedSayingWhy) {
  EXPECT_NE(errorOf(UniqueIdBytes{}).find("all zeros"), std::string::npos);
  UniqueIdBytes good = encodeUniqueId({"127.0.0.1", 5, std::string(64, '0'), std::string(32, 'f')});
  UniqueIdBytes damaged = good;
  damaged[10] ^= 1;  // the address
  EXPECT_NE(errorOf(damaged).find("damaged"), std::string::npos);
  UniqueIdBytes newer = good;
  newer[4] = 2;
  EXPECT_NE(errorOf(newer).find("version 2"), std::string::npos);
  UniqueIdBytes other = good;
  other[0] = 'X';
  EXPECT_NE(errorOf(other).find("not a tiercc unique id"), std::string::npos);
  EXPECT_EQ(errorOf(good), "(accepted)");
  EXPECT_THROW(encodeUniqueId({std::string(64, 'h'), 5, std::string(64, '0'), std::string(32, 'f')}), Error);
  EXPECT_THROW(encodeUniqueId({"h", 5, "xyz", std::string(32, 'f')}), Error);
}

TEST(UniqueId, TheCAbiRefusesWhatIsNotAnId) {
  EXPECT_EQ(tiercc_get_unique_id(nullptr), tiercc_invalid_argument);
  EXPECT_NE(std::string(tiercc_get_last_error()).find("id is NULL"), std::string::npos);
  tiercc_unique_id zeros;
  std::memset(&zeros, 0, sizeof zeros);
  tiercc_comm_t comm = nullptr;
  EXPECT_EQ(tiercc_comm_init_rank_id(&comm, 2, zeros, 0), tiercc_invalid_argument);
  EXPECT_NE(std::string(tiercc_get_last_error()).find("all zeros"), std::string::npos);
  EXPECT_EQ(comm, nullptr);
  EXPECT_EQ(tiercc_comm_init_rank_id(nullptr, 2, zeros, 0), tiercc_invalid_argument);
}

// 2x2 from one id, and a second communicator from a second id of the same process store,
// used interleaved: each id's communicator has its namespace, and both compute exact sums.
TEST(UniqueId, RanksJoinWithTheIdOneOfThemMade) {
  JobResult result = runRanks(
      4,
      [](int rank, const std::string& storeAddr) {
        const UniqueId first = handOut(rank, storeAddr, "first");
        const UniqueId second = handOut(rank, storeAddr, "second");
        Communicator a(first, 4, rank);
        Communicator b(second, 4, rank);
        TIERCC_CHECK(a.numDomains() == 2 && a.domainSize() == 2, a.numDomains() << " domains");
        for (int round = 0; round < 3; ++round) {
          expectSum(a, 1, round);
          expectSum(b, 1 << 18, round);
          expectSum(a, 3000, round);
        }
      },
      idJob(2));
  EXPECT_TRUE(result.ok()) << result.report();
}

// The C ABI, as examples/mpi_app.c uses it.
TEST(UniqueId, TheCAbiJoinsWithAnId) {
  JobResult result = runRanks(
      3,
      [](int rank, const std::string& storeAddr) {
        auto store = connectJobStore(storeAddr, std::chrono::seconds(10));
        tiercc_unique_id id;
        if (rank == 0) {
          TIERCC_CHECK(tiercc_get_unique_id(&id) == tiercc_success, tiercc_get_last_error());
          store->set("cid", Bytes(id.internal, id.internal + sizeof id.internal));
        } else {
          const Bytes got = store->get("cid", Deadline::after(std::chrono::seconds(20)));
          std::memcpy(id.internal, got.data(), sizeof id.internal);
        }
        tiercc_comm_t comm = nullptr;
        TIERCC_CHECK(tiercc_comm_init_rank_id(&comm, 3, id, rank) == tiercc_success, tiercc_get_last_error());
        double value = rank + 1, sum = 0;
        TIERCC_CHECK(tiercc_allreduce(&value, &sum, 1, tiercc_f64, tiercc_sum, comm) == tiercc_success,
                     tiercc_get_last_error());
        TIERCC_CHECK(sum == 6.0, "sum " << sum);
        TIERCC_CHECK(tiercc_comm_destroy(comm) == tiercc_success, tiercc_get_last_error());
      },
      idJob(0));
  EXPECT_TRUE(result.ok()) << result.report();
}

// The process that made the id hosts the store: when it dies, every survivor raises within the
// failure detector's bound, naming it as the store's host.
TEST(UniqueId, TheDeathOfTheIdsMakerIsNamedByEverySurvivor) {
  JobResult result = runRanks(
      4,
      [](int rank, const std::string& storeAddr) {
        Communicator comm(handOut(rank, storeAddr, "id"), 4, rank);
        comm.barrier();
        if (rank == 0) ::kill(getpid(), SIGKILL);
        std::vector<float> buf(1 << 16, 1.0f);
        const auto start = Clock::now();
        try {
          for (int i = 0; i < 1000; ++i)
            comm.allreduce(buf.data(), buf.data(), buf.size(), DataType::F32, ReduceOp::Sum);
          TIERCC_CHECK(false, "1000 allreduces succeeded although rank 0 is gone");
        } catch (const Error& e) {
          const std::string msg = e.what();
          TIERCC_CHECK(e.code() == ErrorCode::PeerFailure, toString(e.code()) << ": " << msg);
          TIERCC_CHECK(msg.find("rank 0 (domain 0") != std::string::npos, "does not name rank 0: " << msg);
          TIERCC_CHECK(Clock::now() - start < std::chrono::seconds(6), "took too long: " << msg);
        }
      },
      idJob(2));
  ASSERT_EQ(result.ranks.size(), 4u);
  for (int r = 1; r < 4; ++r) EXPECT_TRUE(result.ranks[r].ok()) << result.report();
  EXPECT_TRUE(WIFSIGNALED(result.ranks[0].status)) << result.ranks[0].describe();
}

}  // namespace
}  // namespace tiercc::test
