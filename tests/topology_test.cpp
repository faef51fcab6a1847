// Topology detection and overrides, the launch environment, and the parameter registry.
#include <gtest/gtest.h>

#include <cstdlib>

#include "core/params.hpp"
#include "runtime/env.hpp"
#include "runtime/rank_info.hpp"
#include "runtime/watched_peers.hpp"
#include "tiercc/error.hpp"
#include "tiercc/tiercc.hpp"

namespace tiercc {
namespace {

std::vector<RankInfo> ranks(std::vector<std::string> hosts) {
  std::vector<RankInfo> out;
  for (auto& h : hosts) {
    RankInfo r;
    r.hostId = h;
    out.push_back(r);
  }
  return out;
}

TEST(Topology, SameHostIsSameDomain) {
  Topology t = detectTopology(ranks({"a", "b", "a", "b", "c"}), 2);
  EXPECT_EQ(t.numDomains(), 3);
  EXPECT_EQ(t.domain(), 0);
  EXPECT_EQ(t.localRank(), 1);
  EXPECT_EQ(t.members(1), (std::vector<int>{1, 3}));
  EXPECT_EQ(t.minDomainSize(), 1);
  EXPECT_EQ(t.describe(), "3 domains (sizes 2,2,1)");
  EXPECT_EQ(t.nameRank(3), "rank 3 (domain 1, local rank 1)");
}

TEST(Topology, DomainSizeGroupsConsecutiveRanks) {
  auto rs = ranks(std::vector<std::string>(8, "h"));
  for (auto& r : rs) r.domainSize = 4;
  Topology t = detectTopology(rs, 5);
  EXPECT_EQ(t.describe(), "2 domains x 4 ranks");
  EXPECT_EQ(t.domain(), 1);
  EXPECT_EQ(t.localRank(), 1);
  EXPECT_EQ(t.rankAt(1, 3), 7);
}

TEST(Topology, DomainIdsAllowUnevenDomains) {
  auto rs = ranks(std::vector<std::string>(4, "h"));
  int ids[] = {9, 2, 9, 9};
  for (int i = 0; i < 4; ++i) rs[i].domainId = ids[i];
  Topology t = detectTopology(rs, 3);
  EXPECT_EQ(t.describe(), "2 domains (sizes 3,1)");
  EXPECT_EQ(t.domain(), 0);  // numbered by lowest rank: domain id 9 holds rank 0
  EXPECT_EQ(t.localRank(), 2);
  EXPECT_FALSE(t.uniform());
}

TEST(Topology, InconsistentOverridesAreErrors) {
  auto rs = ranks(std::vector<std::string>(3, "h"));
  rs[1].domainId = 1;
  try {
    detectTopology(rs, 0);
    ADD_FAILURE() << "partial TIERCC_DOMAIN_ID accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("not on rank 0"), std::string::npos) << e.what();
  }
  rs = ranks(std::vector<std::string>(3, "h"));
  rs[0].domainSize = 2;
  rs[1].domainSize = 2;
  rs[2].domainSize = 3;
  EXPECT_THROW(detectTopology(rs, 0), Error);
}

// The failure detector's watch: at most four neighbours, never itself, and every rank watched by
// someone, on even, uneven and one-rank domains.
TEST(Topology, EveryRankIsWatchedByANeighbour) {
  const std::vector<std::vector<int>> layouts = {
      {0}, {0, 0}, {0, 0, 0, 0, 1, 1, 1, 1}, {0, 0, 0, 1}, {0, 1}, {0, 0, 1, 1, 2}, {0, 1, 2, 3, 4}, {0, 0, 0}};
  for (const auto& ids : layouts) {
    const int n = static_cast<int>(ids.size());
    auto rs = ranks(std::vector<std::string>(n, "h"));
    for (int i = 0; i < n; ++i) rs[i].domainId = ids[i];
    std::vector<int> watchers(n, 0);
    for (int r = 0; r < n; ++r) {
      const std::vector<int> watched = watchedPeers(detectTopology(rs, r));
      EXPECT_LE(watched.size(), 4u);
      for (int w : watched) {
        EXPECT_NE(w, r);
        ++watchers[w];
      }
    }
    for (int r = 0; r < n && n > 1; ++r) EXPECT_GE(watchers[r], 1) << "rank " << r << " of " << n << " is unwatched";
  }
}

TEST(Topology, RankInfoRoundTrips) {
  RankInfo r;
  r.hostId = "node7/abcd";
  r.pid = 1234;
  r.domainId = 3;
  r.domainSize = 0;
  r.cacheBytes = 1 << 20;
  r.settings = "transport=tcp shm_chunk=4096";
  RankInfo back = RankInfo::decode(r.encode());
  EXPECT_EQ(back.settings, r.settings);
  EXPECT_EQ(back.hostId, r.hostId);
  EXPECT_EQ(back.pid, r.pid);
  EXPECT_EQ(back.domainId, r.domainId);
  EXPECT_EQ(back.cacheBytes, r.cacheBytes);
}

class EnvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v : {"TIERCC_RANK", "TIERCC_WORLD_SIZE", "TIERCC_STORE", "OMPI_COMM_WORLD_RANK",
                          "OMPI_COMM_WORLD_SIZE", "RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "PMIX_NAMESPACE"})
      unsetenv(v);
  }
  void TearDown() override { SetUp(); }
};

TEST_F(EnvTest, TiercccVariables) {
  setenv("TIERCC_RANK", "3", 1);
  setenv("TIERCC_WORLD_SIZE", "8", 1);
  setenv("TIERCC_STORE", "127.0.0.1:29500", 1);
  LaunchEnv e = readLaunchEnv();
  EXPECT_EQ(e.rank, 3);
  EXPECT_EQ(e.worldSize, 8);
  EXPECT_EQ(e.storeAddr, "127.0.0.1:29500");
}

TEST_F(EnvTest, OpenMpiAndTorchrun) {
  setenv("OMPI_COMM_WORLD_RANK", "1", 1);
  setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
  setenv("TIERCC_STORE", "h:1", 1);
  EXPECT_EQ(readLaunchEnv().rank, 1);
  SetUp();
  setenv("RANK", "0", 1);
  setenv("WORLD_SIZE", "4", 1);
  setenv("MASTER_ADDR", "10.0.0.1", 1);
  setenv("MASTER_PORT", "29500", 1);
  LaunchEnv e = readLaunchEnv();
  EXPECT_EQ(e.worldSize, 4);
  EXPECT_EQ(e.storeAddr, "10.0.0.1:29501");  // PyTorch's own store keeps MASTER_PORT
}

TEST_F(EnvTest, MissingOrBadValuesAreExplained) {
  EXPECT_THROW(readLaunchEnv(), Error);
  setenv("TIERCC_RANK", "x", 1);
  setenv("TIERCC_WORLD_SIZE", "2", 1);
  try {
    readLaunchEnv();
    ADD_FAILURE() << "accepted TIERCC_RANK=x";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("TIERCC_RANK='x'"), std::string::npos) << e.what();
  }
  setenv("TIERCC_RANK", "2", 1);
  EXPECT_THROW(readLaunchEnv(), Error);  // rank 2 of 2
}

// What a PMIx launcher may tell: an incomplete environment is no error when asked for what there
// is, a malformed one still is; fromEnv explains what is missing (PMIx included) when no PMIx
// server started the process.
TEST_F(EnvTest, IncompleteEnvironmentLeavesTheRestToPmix) {
  setenv("OMPI_COMM_WORLD_RANK", "1", 1);
  setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
  LaunchEnv e = readLaunchEnv(false);
  EXPECT_EQ(e.rank, 1);
  EXPECT_EQ(e.worldSize, 4);
  EXPECT_TRUE(e.storeAddr.empty());
  SetUp();
  e = readLaunchEnv(false);
  EXPECT_EQ(e.rank, -1);
  setenv("TIERCC_RANK", "7", 1);
  setenv("TIERCC_WORLD_SIZE", "2", 1);
  EXPECT_THROW(readLaunchEnv(false), Error);  // rank 7 of 2
  SetUp();
  setenv("TIERCC_RANK", "0", 1);
  setenv("TIERCC_WORLD_SIZE", "2", 1);
  try {
    Communicator::fromEnv();
    ADD_FAILURE() << "fromEnv started with no store and no PMIx";
  } catch (const Error& e2) {
    EXPECT_EQ(e2.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(std::string(e2.what()).find("PMIx"), std::string::npos) << e2.what();
  }
}

TEST(Params, RegistryValuesAndSources) {
  unsetenv("TIERCC_TIMEOUT");
  EXPECT_EQ(params::source("TIERCC_TIMEOUT"), "default");
  EXPECT_EQ(params::getDuration("TIERCC_TIMEOUT"), std::chrono::seconds(300));
  setenv("TIERCC_TIMEOUT", "1500ms", 1);
  EXPECT_EQ(params::source("TIERCC_TIMEOUT"), "environment");
  EXPECT_EQ(params::getDuration("TIERCC_TIMEOUT"), std::chrono::milliseconds(1500));
  setenv("TIERCC_TIMEOUT", "soon", 1);
  EXPECT_THROW(params::getDuration("TIERCC_TIMEOUT"), Error);
  unsetenv("TIERCC_TIMEOUT");
  EXPECT_EQ(params::parseDuration("5m", "x"), std::chrono::minutes(5));
  EXPECT_EQ(params::parseDuration("2", "x"), std::chrono::seconds(2));
  EXPECT_THROW(params::raw("TIERCC_NO_SUCH_PARAMETER"), Error);
  for (const auto& p : params::all()) EXPECT_NE(std::string(p.doc), "") << p.name;
}

}  // namespace
}  // namespace tiercc
