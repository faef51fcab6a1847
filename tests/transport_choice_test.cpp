// Which scale-out transport a job gets when TIERCC_TRANSPORT is unset (transport/factory.hpp):
// ibverbs where an RDMA device is, UCX only where it has a network transport besides tcp, else
// tiercc's own tcp. What the kernel lists in /sys/class/infiniband decides what to expect, so the
// test reads the machine instead of the code's answer.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>

#include "tests/support/multiprocess.hpp"
#include "tests/support/transport_skip.hpp"
#include "tiercc/tiercc.hpp"
#include "transport/factory.hpp"

namespace tiercc::test {
namespace {

// RDMA devices the kernel has (SoftRoCE's rxe0 counts): none on a machine without RDMA modules.
int rdmaDevices() {
  std::error_code ec;
  int n = 0;
  for (auto it = std::filesystem::directory_iterator("/sys/class/infiniband", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
    ++n;
  return n;
}

class TransportChoice : public ::testing::Test {
 protected:
  void SetUp() override { ::unsetenv("TIERCC_TRANSPORT"); }
  void TearDown() override { SetUp(); }
};

// Without an RDMA device UCX reaches other hosts only by sockets: it runs, but the default passes
// it over for the tcp transport, saying why; asked for by name, it is taken.
TEST_F(TransportChoice, UcxWithOnlySocketsIsNotTheDefault) {
  TIERCC_SKIP_WITHOUT_TRANSPORT("ucx");
  if (rdmaDevices() > 0) GTEST_SKIP() << "this machine has RDMA devices: UCX has more than sockets here";
  const auto why = transportPassedOver("ucx");
  ASSERT_TRUE(why.has_value()) << "UCX is not passed over on a machine without RDMA devices";
  EXPECT_NE(why->find("only by sockets (tcp/"), std::string::npos) << *why;
  EXPECT_NE(why->find("TIERCC_TRANSPORT=ucx"), std::string::npos) << *why;
  EXPECT_EQ(defaultTransportName(), "tcp");
  ::setenv("TIERCC_TRANSPORT", "ucx", 1);
  EXPECT_EQ(defaultTransportName(), "ucx");
  EXPECT_FALSE(transportPassedOver("tcp").has_value());
}

// A job of two domains uses what defaultTransportName says, and TIERCC_TRANSPORT over it.
TEST_F(TransportChoice, AJobRunsOnTheDefaultUnlessAsked) {
  if (rdmaDevices() > 0) GTEST_SKIP() << "this machine has RDMA devices: ibverbs or UCX is its default";
  for (const char* asked : {"", "ucx"}) {
    if (auto why = *asked ? transportUnavailable(asked) : std::nullopt) {
      std::cout << "[  SKIPPED ] the job over " << asked << ": " << *why << "\n";
      continue;
    }
    JobOptions jo;
    jo.env = {{"TIERCC_DOMAIN_SIZE", "1"}, {"TIERCC_DEBUG", "INFO"}, {"TIERCC_DEBUG_SUBSYS", "INIT"}};
    if (*asked) jo.env.push_back({"TIERCC_TRANSPORT", asked});
    JobResult result = runRanks(
        2,
        [](int rank, const std::string& store) {
          Communicator comm(store, 2, rank);
          comm.barrier();
        },
        jo);
    ASSERT_TRUE(result.ok()) << result.report();
    const std::string want = std::string("scale-out ") + (*asked ? asked : "tcp");
    for (const RankResult& r : result.ranks)
      EXPECT_NE(r.output.find(want), std::string::npos) << "rank " << r.rank << " (asked '" << asked << "'):\n"
                                                        << r.output;
  }
}

}  // namespace
}  // namespace tiercc::test
