// One NIC per rail: which entry of TIERCC_SOCKET_IFNAME / TIERCC_SOCKET_IFADDR / TIERCC_IB_DEVICE
// a local rank takes, and where the TCP transport listens by default (transport/nic_choice.hpp).
// The interfaces of this machine are read, not assumed: lo is always there.
#include "transport/nic_choice.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "bootstrap/local_address.hpp"
#include "tiercc/error.hpp"

namespace tiercc {
namespace {

class NicChoice : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("TIERCC_SOCKET_IFADDR");
    unsetenv("TIERCC_SOCKET_IFNAME");
  }
  void TearDown() override { SetUp(); }
};

TEST_F(NicChoice, LocalRankRTakesEntryRModuloTheLength) {
  EXPECT_EQ(entryForLocalRank("", 3, "P"), "");
  EXPECT_EQ(entryForLocalRank("mlx5_0", 5, "P"), "mlx5_0");
  EXPECT_EQ(entryForLocalRank("rail0,rail1,rail2", 0, "P"), "rail0");
  EXPECT_EQ(entryForLocalRank("rail0,rail1,rail2", 2, "P"), "rail2");
  EXPECT_EQ(entryForLocalRank("rail0,rail1,rail2", 4, "P"), "rail1");
  try {
    entryForLocalRank("a,,b", 0, "TIERCC_IB_DEVICE");
    ADD_FAILURE() << "accepted an empty entry";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("TIERCC_IB_DEVICE='a,,b' has an empty entry"), std::string::npos) << e.what();
  }
}

TEST_F(NicChoice, TcpListensByAddressThenNameThenHostsSpanned) {
  std::string why;
  EXPECT_EQ(tcpListenAddress(1, false, why), "127.0.0.1");
  EXPECT_NE(why.find("loopback"), std::string::npos) << why;
  EXPECT_EQ(tcpListenAddress(1, true, why), firstRoutableAddress());
  EXPECT_NE(why.find("spans hosts"), std::string::npos) << why;

  setenv("TIERCC_SOCKET_IFNAME", "lo", 1);
  EXPECT_EQ(tcpListenAddress(3, true, why), "127.0.0.1");
  EXPECT_NE(why.find("lo, TIERCC_SOCKET_IFNAME=lo for local rank 3"), std::string::npos) << why;
  setenv("TIERCC_SOCKET_IFNAME", "l*", 1);  // a prefix: lo is the one interface here that has it, or the first
  EXPECT_FALSE(tcpListenAddress(0, false, why).empty());
  setenv("TIERCC_SOCKET_IFNAME", "no-such-nic0", 1);
  try {
    tcpListenAddress(0, false, why);
    ADD_FAILURE() << "accepted an interface that does not exist";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("interface no-such-nic0, which is not up"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("lo 127.0.0.1"), std::string::npos) << e.what();  // lists what there is
  }
  setenv("TIERCC_SOCKET_IFNAME", "zz*", 1);
  EXPECT_THROW(tcpListenAddress(0, false, why), Error);

  // An address, or one per local rank, wins over the names.
  setenv("TIERCC_SOCKET_IFADDR", "127.0.0.1,127.0.0.2", 1);
  EXPECT_EQ(tcpListenAddress(1, true, why), "127.0.0.2");
  EXPECT_EQ(why, "TIERCC_SOCKET_IFADDR for local rank 1");
}

}  // namespace
}  // namespace tiercc
