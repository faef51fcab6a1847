// The TCP store's secret: a server that has one serves only connections that presented it first,
// cuts off those that do not within authTime, and a refused request changes nothing. Then the
// job: tiercc-run and the test fixture give every rank the job's secret (TIERCC_STORE_SECRET),
// and a rank with another secret fails at once, saying so.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "bootstrap/store.hpp"
#include "bootstrap/store_protocol.hpp"
#include "tests/support/expect_error.hpp"
#include "tests/support/multiprocess.hpp"
#include "tests/support/raw_store_socket.hpp"
#include "tiercc/tiercc.hpp"

namespace tiercc {
namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;
using test::contains;
using test::errorOf;
using test::RawSocket;
namespace proto = store_protocol;

constexpr auto kLongWait = 5s;
constexpr const char* kSecret = "5d1e6b0a9c2f47e3";

Deadline in(milliseconds timeout) { return Deadline::after(timeout); }

std::shared_ptr<Store> withSecret(std::uint16_t port, const std::string& secret) {
  return connectTcpStore("127.0.0.1", port, in(kLongWait), milliseconds::max(), secret);
}

Bytes helloFrame(const std::string& secret) {
  return proto::encodeRequestFrame({proto::Op::Hello, {}, Bytes(secret.begin(), secret.end()), 0, 0});
}

TEST(StoreSecret, SameSecretComparesWholeSecrets) {
  auto bytes = [](const std::string& s) { return Bytes(s.begin(), s.end()); };
  EXPECT_TRUE(proto::sameSecret(bytes("abc"), bytes("abc")));
  EXPECT_TRUE(proto::sameSecret(bytes(""), bytes("")));
  EXPECT_FALSE(proto::sameSecret(bytes("abc"), bytes("abd")));
  EXPECT_FALSE(proto::sameSecret(bytes("abc"), bytes("abcd")));  // a prefix is not the secret
  EXPECT_FALSE(proto::sameSecret(bytes(""), bytes("a")));
  EXPECT_FALSE(proto::sameSecret(bytes(std::string("a\0", 2)), bytes("a")));
}

// An unauthenticated SET gets an error and the connection is closed; the key was not written.
TEST(StoreSecret, AnUnauthenticatedSetIsRefusedAndChangesNothing) {
  TcpStoreServer server("127.0.0.1", 0, TcpStoreServer::Limits{}, kSecret);
  auto job = withSecret(server.port(), kSecret);
  job->setString("net/3", "198.18.0.3:4000");
  RawSocket intruder(server.port());
  intruder.send(proto::encodeRequestFrame({proto::Op::Set, {"net/3"}, Bytes{'e', 'v', 'i', 'l'}, 0, 0}));
  auto reply = intruder.readReply();
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->status, proto::Status::Error);
  EXPECT_TRUE(contains(reply->message, "requires the job's secret")) << reply->message;
  EXPECT_TRUE(intruder.closedByPeer());
  EXPECT_EQ(job->getString("net/3", in(kLongWait)), "198.18.0.3:4000");
}

TEST(StoreSecret, AWrongOrMissingSecretIsAClearErrorAndTheRightOneIsServed) {
  TcpStoreServer server("127.0.0.1", 0, TcpStoreServer::Limits{}, kSecret);
  const auto wrong = errorOf([&] { withSecret(server.port(), "5d1e6b0a9c2f47e4"); }, ErrorCode::InvalidArgument);
  EXPECT_TRUE(contains(wrong, "refused this process's secret")) << wrong;
  EXPECT_TRUE(contains(wrong, "wrong secret")) << wrong;
  auto none = connectTcpStore("127.0.0.1", server.port(), in(kLongWait));
  const auto missing = errorOf([&] { none->add("counter", 1); }, ErrorCode::InvalidArgument);
  EXPECT_TRUE(contains(missing, "requires the job's secret (TIERCC_STORE_SECRET) before ADD")) << missing;
  auto job = withSecret(server.port(), kSecret);
  EXPECT_EQ(job->add("counter", 1), 1) << "a refused ADD changed the counter";
}

// Only a client that presented the secret may sit idle on a connection.
TEST(StoreSecret, AConnectionThatDoesNotAuthenticateIsCutOffAndAnAuthenticatedIdleOneIsNot) {
  TcpStoreServer::Limits limits;
  limits.authTime = 300ms;
  TcpStoreServer server("127.0.0.1", 0, limits, kSecret);
  RawSocket member(server.port());
  member.send(helloFrame(kSecret));
  ASSERT_TRUE(member.readReply());
  RawSocket silent(server.port());
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(silent.closedByPeer()) << "an unauthenticated connection was kept";
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
  std::this_thread::sleep_for(400ms);
  member.send(proto::encodeRequestFrame({proto::Op::Check, {"x"}, {}, 0, 0}));
  auto reply = member.readReply();
  ASSERT_TRUE(reply) << "the authenticated idle client was cut off";
  EXPECT_EQ(reply->status, proto::Status::Ok);
}

// The job's processes disagree on TIERCC_STORE_SECRET: better said at once than served.
TEST(StoreSecret, ASecretPresentedToAStoreWithoutOneIsRefused) {
  TcpStoreServer server;
  const auto why = errorOf([&] { withSecret(server.port(), kSecret); }, ErrorCode::InvalidArgument);
  EXPECT_TRUE(contains(why, "has no secret, but the client presented one")) << why;
}

// The fixture's store has a secret and every rank has it; a rank given another fails at once
// with the reason, instead of waiting out the job's timeout for peers it cannot meet. (Rank 0
// stays out: it would only wait for rank 1.)
TEST(StoreSecret, ARankWithAnotherSecretFailsAtOnceSayingSo) {
  test::JobOptions options;
  options.env = {{"TIERCC_TIMEOUT", "20s"}};
  options.rankEnv = [](int rank) {
    std::vector<std::pair<std::string, std::string>> env;
    if (rank == 1) env.emplace_back("TIERCC_STORE_SECRET", "not-the-jobs");
    return env;
  };
  const auto start = std::chrono::steady_clock::now();
  auto job = test::runRanks(
      2,
      [](int rank, const std::string& store) {
        if (rank == 0) return;
        try {
          Communicator comm(store, 2, rank);
        } catch (const Error& e) {
          if (e.code() == ErrorCode::InvalidArgument && contains(e.what(), "wrong secret")) {
            std::printf("refused as expected: %s\n", e.what());
            return;
          }
          throw;
        }
        throw std::runtime_error("a rank with another secret joined the job");
      },
      options);
  EXPECT_TRUE(job.ranks[1].ok()) << job.report();
  EXPECT_TRUE(contains(job.ranks[1].output, "refused as expected")) << job.ranks[1].output;
  EXPECT_LT(std::chrono::steady_clock::now() - start, 15s) << "the refused rank did not fail at once";
}

}  // namespace
}  // namespace tiercc
