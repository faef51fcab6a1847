// Tests of the bootstrap Store: one contract run over the in-process, prefixed and TCP stores,
// then what only TCP has (concurrent clients, server failure, hostile frames); the wire format
// and address parsing are in store_protocol_test.cpp. Every wait is bounded; timeout tests use deadlines of a few hundred ms.
#include "bootstrap/store.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <vector>
#include <future>
#include <sstream>
#include <thread>

#include "core/errors.hpp"
#include "tests/support/expect_error.hpp"
#include "tests/support/raw_store_socket.hpp"
#include "tiercc/tiercc.hpp"
#include "bootstrap/store_protocol.hpp"

namespace tiercc {
namespace {

namespace proto = store_protocol;
using namespace std::chrono_literals;
using std::chrono::milliseconds;

constexpr auto kShortWait = 300ms;  // deadlines that are meant to expire
constexpr auto kLongWait = 5s;      // deadlines that are not meant to expire
constexpr auto kBound = 4s;         // an error expected "in bounded time" arrives within this

Deadline in(milliseconds timeout) { return Deadline::after(timeout); }

milliseconds since(Clock::time_point start) { return std::chrono::duration_cast<milliseconds>(Clock::now() - start); }

using test::contains;
using test::frameOf;
using test::RawSocket;
using test::errorOf;

// ---------------------------------------------------------------------------------------------
// The Store contract, over every implementation.

// TcpWithSecret: a server with a secret, and clients that present it.
enum class Kind { InProcess, Prefixed, Tcp, TcpWithSecret };

std::string kindName(const testing::TestParamInfo<Kind>& info) {
  switch (info.param) {
    case Kind::InProcess:
      return "InProcess";
    case Kind::Prefixed:
      return "Prefixed";
    case Kind::Tcp:
      return "Tcp";
    case Kind::TcpWithSecret:
      return "TcpWithSecret";
  }
  return "Unknown";
}

class StoreContract : public testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    if (GetParam() == Kind::Tcp) {
      server_ = std::make_unique<TcpStoreServer>();
    } else if (GetParam() == Kind::TcpWithSecret) {
      server_ = std::make_unique<TcpStoreServer>("127.0.0.1", 0, TcpStoreServer::Limits{}, kSecret);
    } else {
      shared_ = makeInProcessStore();
    }
    store_ = client();
  }

  // A new client of the same store: its own connection for TCP.
  std::shared_ptr<Store> client() {
    switch (GetParam()) {
      case Kind::InProcess:
        return shared_;
      case Kind::Prefixed:
        return std::make_shared<PrefixStore>(shared_, kPrefix);
      case Kind::Tcp:
        return connectTcpStore("127.0.0.1", server_->port(), in(kLongWait));
      case Kind::TcpWithSecret:
        return connectTcpStore("127.0.0.1", server_->port(), in(kLongWait), milliseconds::max(), kSecret);
    }
    return nullptr;
  }

  // How errors name key: with the prefix, which is the key the base store really waited for.
  std::string quoted(const std::string& key) const {
    return "'" + std::string(GetParam() == Kind::Prefixed ? kPrefix : "") + key + "'";
  }

  static constexpr const char* kPrefix = "job7/";
  static constexpr const char* kSecret = "3f9a0c7e-contract";
  std::unique_ptr<TcpStoreServer> server_;
  std::shared_ptr<Store> shared_;
  std::shared_ptr<Store> store_;
};

INSTANTIATE_TEST_SUITE_P(AllStores, StoreContract,
                         testing::Values(Kind::InProcess, Kind::Prefixed, Kind::Tcp, Kind::TcpWithSecret), kindName);

TEST_P(StoreContract, GetReturnsWhatWasSetIncludingBinaryAndEmpty) {
  Bytes binary = {0, 255, 7, 0};
  store_->set("bin", binary);
  store_->set("empty", {});
  EXPECT_EQ(store_->get("bin", in(kLongWait)), binary);
  EXPECT_EQ(store_->get("empty", in(kLongWait)), Bytes());
}

TEST_P(StoreContract, SetReplacesTheValue) {
  store_->setString("k", "first");
  store_->setString("k", "second");
  EXPECT_EQ(store_->getString("k", in(kLongWait)), "second");
}

TEST_P(StoreContract, GetWaitsForASetFromAnotherClient) {
  auto writer = client();
  auto got = std::async(std::launch::async, [&] { return store_->getString("late", in(kLongWait)); });
  // Only makes it likely that the GET is already waiting; the result is the same either way.
  std::this_thread::sleep_for(50ms);
  writer->setString("late", "value");
  EXPECT_EQ(got.get(), "value");
}

TEST_P(StoreContract, GetTimesOutNamingTheKey) {
  auto start = Clock::now();
  std::string message = errorOf([&] { store_->get("missing", in(kShortWait)); }, ErrorCode::Timeout);
  EXPECT_TRUE(contains(message, "timed out after")) << message;
  EXPECT_TRUE(contains(message, quoted("missing"))) << message;
  EXPECT_GE(since(start), kShortWait - 5ms);
  EXPECT_LT(since(start), kBound);
}

TEST_P(StoreContract, GetWithAnExpiredDeadlineStillReturnsAPresentValue) {
  store_->setString("here", "yes");
  EXPECT_EQ(store_->getString("here", in(0ms)), "yes");
  errorOf([&] { store_->get("absent", in(0ms)); }, ErrorCode::Timeout);
}

TEST_P(StoreContract, AddStartsAtZeroAndStoresDecimalText) {
  EXPECT_EQ(store_->add("counter", 5), 5);
  EXPECT_EQ(store_->add("counter", -7), -2);
  EXPECT_EQ(store_->getString("counter", in(kLongWait)), "-2");
}

TEST_P(StoreContract, AddOnANonIntegerFailsAndTheStoreKeepsWorking) {
  store_->setString("text", "abc");
  std::string message = errorOf([&] { store_->add("text", 1); }, ErrorCode::InvalidArgument);
  EXPECT_TRUE(contains(message, "text")) << message;
  store_->setString("big", std::to_string(INT64_MAX));
  errorOf([&] { store_->add("big", 1); }, ErrorCode::InvalidArgument);
  EXPECT_EQ(store_->add("fine", 2), 2);
}

TEST_P(StoreContract, WaitReturnsOnceEveryKeyExists) {
  auto writer = client();
  auto waited = std::async(std::launch::async, [&] { store_->wait({"a", "b"}, in(kLongWait)); });
  writer->setString("a", "1");
  writer->add("b", 1);
  waited.get();
  EXPECT_TRUE(store_->check({"a", "b"}));
}

TEST_P(StoreContract, WaitTimesOutNamingOnlyTheMissingKeys) {
  store_->setString("a", "1");
  std::string message = errorOf([&] { store_->wait({"a", "b", "c"}, in(kShortWait)); }, ErrorCode::Timeout);
  EXPECT_TRUE(contains(message, "waiting for key(s) " + quoted("b") + ", " + quoted("c"))) << message;
  EXPECT_FALSE(contains(message, quoted("a"))) << message;
}

TEST_P(StoreContract, CheckAnswersWithoutWaiting) {
  EXPECT_TRUE(store_->check({}));
  EXPECT_FALSE(store_->check({"x"}));
  store_->setString("x", "1");
  EXPECT_TRUE(store_->check({"x"}));
  EXPECT_FALSE(store_->check({"x", "y"}));
}

TEST_P(StoreContract, EraseRemovesTheKeyAndIgnoresMissingOnes) {
  store_->setString("gone", "1");
  store_->erase("gone");
  store_->erase("never-there");
  EXPECT_FALSE(store_->check({"gone"}));
  errorOf([&] { store_->get("gone", in(0ms)); }, ErrorCode::Timeout);
}

TEST_P(StoreContract, ConcurrentAddsFromEightClientsAreExact) {
  constexpr int kThreads = 8;
  constexpr int kAdds = 1000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([store = client()] {
      for (int i = 0; i < kAdds; ++i) store->add("total", 1);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(store_->add("total", 0), kThreads * kAdds);
}

TEST_P(StoreContract, PrefixStoresAreIsolated) {
  PrefixStore a(store_, "a/");
  PrefixStore b(store_, "b/");
  a.setString("k", "from a");
  EXPECT_FALSE(b.check({"k"}));
  EXPECT_EQ(store_->getString("a/k", in(kLongWait)), "from a");
  EXPECT_EQ(a.add("n", 2), 2);
  EXPECT_EQ(b.add("n", 5), 5);
  std::string message = errorOf([&] { b.wait({"k"}, in(kShortWait)); }, ErrorCode::Timeout);
  EXPECT_TRUE(contains(message, quoted("b/k"))) << message;
  a.erase("k");
  EXPECT_FALSE(store_->check({"a/k"}));
}

// A bound loopback socket: a port nobody else takes while it lives; it listens only if asked.
class ReservedPort {
 public:
  explicit ReservedPort(bool listening) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in addr = RawSocket::loopback(0);
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) failErrno("bind");
    if (listening && ::listen(fd_, 8) != 0) failErrno("listen");
    socklen_t len = sizeof(addr);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  ~ReservedPort() { release(); }
  void release() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  std::uint16_t port() const { return port_; }

 private:
  int fd_;
  std::uint16_t port_ = 0;
};

// ---------------------------------------------------------------------------------------------
// What only the TCP store has.

class TcpStoreTest : public testing::Test {
 protected:
  std::shared_ptr<Store> connect() { return connectTcpStore("127.0.0.1", server_.port(), in(kLongWait)); }
  TcpStoreServer server_;
};

TEST_F(TcpStoreTest, OneClientSharedByThreadsSerialisesTheirCalls) {
  auto shared = connect();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 500; ++i) shared->add("n", 1);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(shared->add("n", 0), 2000);
}

TEST_F(TcpStoreTest, AClientWaitingOnGetDoesNotBlockOtherClients) {
  auto waiter = connect();
  auto other = connect();
  auto got = std::async(std::launch::async, [&] { return waiter->getString("k", in(kLongWait)); });
  std::this_thread::sleep_for(50ms);  // only makes it likely that the GET is parked first
  other->setString("unrelated", "x");
  EXPECT_EQ(other->getString("unrelated", in(kLongWait)), "x");
  EXPECT_EQ(other->add("n", 3), 3);
  EXPECT_EQ(got.wait_for(0s), std::future_status::timeout);  // "k" does not exist yet
  other->setString("k", "v");
  EXPECT_EQ(got.get(), "v");
}

TEST_F(TcpStoreTest, ServerStoppedWhileAClientWaitsGivesPeerFailureInBoundedTime) {
  auto client = connect();
  auto start = Clock::now();
  auto waited = std::async(std::launch::async,
                           [&] { return errorOf([&] { client->get("never", in(20s)); }, ErrorCode::PeerFailure); });
  std::this_thread::sleep_for(50ms);  // only makes it likely that the GET is parked first
  server_.stop();
  ASSERT_EQ(waited.wait_for(kBound), std::future_status::ready);
  std::string message = waited.get();
  EXPECT_LT(since(start), kBound);
  std::string address = "127.0.0.1:" + std::to_string(server_.port());
  EXPECT_TRUE(contains(message, "store server " + address + " went away")) << message;
  // The connection stays poisoned: later calls fail the same way, at once.
  message = errorOf([&] { client->setString("k", "v"); }, ErrorCode::PeerFailure);
  EXPECT_TRUE(contains(message, address)) << message;
}

TEST_F(TcpStoreTest, StoppedServerRefusesNewClients) {
  server_.stop();
  server_.stop();  // idempotent
  errorOf([&] { connectTcpStore("127.0.0.1", server_.port(), in(kShortWait)); }, ErrorCode::Timeout);
}

TEST_F(TcpStoreTest, ConnectingToAPortNobodyListensOnFailsAtTheDeadline) {
  ReservedPort nobody(/*listening=*/false);
  auto start = Clock::now();
  std::string message =
      errorOf([&] { connectTcpStore("127.0.0.1", nobody.port(), in(kShortWait)); }, ErrorCode::Timeout);
  EXPECT_GE(since(start), kShortWait - 5ms);
  EXPECT_LT(since(start), kBound);
  EXPECT_TRUE(contains(message, "127.0.0.1:" + std::to_string(nobody.port()))) << message;
}

TEST(TcpStoreConnect, RetriesUntilTheServerStarts) {
  ReservedPort reserved(/*listening=*/false);
  std::uint16_t port = reserved.port();
  reserved.release();
  auto client = std::async(std::launch::async, [&] { return connectTcpStore("127.0.0.1", port, in(kLongWait)); });
  std::this_thread::sleep_for(120ms);  // only makes it likely that the first attempts are refused
  TcpStoreServer server("127.0.0.1", port);
  auto store = client.get();
  store->setString("k", "v");
  EXPECT_EQ(store->getString("k", in(kLongWait)), "v");
}

TEST(TcpStoreStalled, AGetWithADeadlineDoesNotHangOnAServerThatNeverAnswers) {
  ReservedPort silent(/*listening=*/true);  // the kernel accepts; nobody ever reads or answers
  auto store = connectTcpStore("127.0.0.1", silent.port(), in(kLongWait));
  auto start = Clock::now();
  std::string message = errorOf([&] { store->get("k", in(kShortWait)); }, ErrorCode::Timeout);
  EXPECT_LT(since(start), kBound);
  EXPECT_TRUE(contains(message, "'k'")) << message;
  errorOf([&] { store->check({"k"}); }, ErrorCode::PeerFailure);
}

struct BadFrame {
  const char* name;
  Bytes frame;
  const char* expected;  // part of the server's error message
};

// ctest lists the case by name rather than as raw bytes.
void PrintTo(const BadFrame& f, std::ostream* out) { *out << f.name; }

std::vector<BadFrame> badFrames() {
  Bytes trailing = frameOf({static_cast<std::uint8_t>(proto::Op::Erase), 1, 0, 0, 0, 'k', 0xEE});
  return {
      {"UnknownOpcode", frameOf({0x7F}), "unknown opcode 127"},
      {"KeyLongerThanFrame", frameOf({static_cast<std::uint8_t>(proto::Op::Set), 0xE8, 0x03, 0, 0, 'a'}),
       "truncated key"},
      {"TrailingBytes", trailing, "trailing"},
      {"HugeKeyCount", frameOf({static_cast<std::uint8_t>(proto::Op::Check), 0xFF, 0xFF, 0xFF, 0xFF}), "count"},
      {"NegativeTimeout",
       frameOf({static_cast<std::uint8_t>(proto::Op::Get), 1, 0, 0, 0, 'k', 0xF0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                0xFF}),
       "invalid timeout"},
      {"EmptyFrame", frameOf({}), "empty frame"},
      {"OversizedLengthPrefix", frameOf(0xFFFFFFFF, {}), "exceeds the limit"},
  };
}

class TcpStoreBadFrame : public testing::TestWithParam<BadFrame> {};

INSTANTIATE_TEST_SUITE_P(Frames, TcpStoreBadFrame, testing::ValuesIn(badFrames()),
                         [](const auto& frameInfo) { return std::string(frameInfo.param.name); });

TEST_P(TcpStoreBadFrame, GetsAnErrorReplyThenTheConnectionClosesAndTheServerServesOthers) {
  TcpStoreServer server;
  auto good = connectTcpStore("127.0.0.1", server.port(), in(kLongWait));
  good->setString("before", "1");
  {
    RawSocket raw(server.port());
    raw.send(GetParam().frame);
    auto reply = raw.readReply();
    ASSERT_TRUE(reply.has_value());
    EXPECT_EQ(reply->status, proto::Status::Error);
    EXPECT_TRUE(contains(reply->message, GetParam().expected)) << reply->message;
    EXPECT_TRUE(raw.closedByPeer());
  }
  EXPECT_EQ(good->getString("before", in(kLongWait)), "1");
  auto fresh = connectTcpStore("127.0.0.1", server.port(), in(kLongWait));
  EXPECT_EQ(fresh->add("n", 1), 1);
}

TEST_F(TcpStoreTest, AnOversizedFrameFollowedByDataStillGetsItsErrorReply) {
  RawSocket raw(server_.port());
  // Unread input behind the header must not turn the close into a reset that loses the reply.
  raw.send(frameOf(TcpStoreServer::kMaxFrameBytes + 1, Bytes(64 * 1024, 0xAB)));
  auto reply = raw.readReply();
  ASSERT_TRUE(reply.has_value());
  EXPECT_TRUE(contains(reply->message, "exceeds the limit")) << reply->message;
}

TEST_F(TcpStoreTest, ARequestWhileAGetIsParkedIsAProtocolError) {
  RawSocket raw(server_.port());
  raw.send(proto::encodeRequestFrame({proto::Op::Get, {"k"}, {}, 0, proto::kWaitForever}));
  raw.send(proto::encodeRequestFrame({proto::Op::Check, {"k"}, {}, 0, 0}));
  auto reply = raw.readReply();
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->status, proto::Status::Error);
  EXPECT_TRUE(contains(reply->message, "pending")) << reply->message;
  EXPECT_TRUE(raw.closedByPeer());
  // The dropped GET must not be answered into a dead connection when its key appears.
  connect()->setString("k", "v");
  EXPECT_EQ(connect()->getString("k", in(kLongWait)), "v");
}

TEST_F(TcpStoreTest, AWaiterWhoseClientVanishedIsForgotten) {
  {
    RawSocket raw(server_.port());
    raw.send(proto::encodeRequestFrame({proto::Op::Wait, {"a", "b"}, {}, 0, 60'000}));
  }
  auto store = connect();
  store->setString("a", "1");
  store->setString("b", "2");
  EXPECT_TRUE(store->check({"a", "b"}));
}

TEST_F(TcpStoreTest, LargeValuesRoundTripAndOversizedOnesAreRefusedByTheClient) {
  auto store = connect();
  Bytes big(1 << 20);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<std::uint8_t>(i * 131);
  store->set("big", big);
  EXPECT_EQ(store->get("big", in(kLongWait)), big);
  Bytes tooBig(TcpStoreServer::kMaxFrameBytes);
  errorOf([&] { store->set("huge", tooBig); }, ErrorCode::InvalidArgument);
  EXPECT_EQ(store->add("still-works", 1), 1);
}

TEST_F(TcpStoreTest, BindsToLoopbackByDefault) {
  std::ifstream table("/proc/net/tcp");
  if (!table) GTEST_SKIP() << "/proc/net/tcp is not readable here";
  char portHex[8];
  std::snprintf(portHex, sizeof(portHex), "%04X", server_.port());
  std::string line;
  std::string listenAddress;
  while (std::getline(table, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state;
    fields >> slot >> local >> remote >> state;
    if (state == "0A" && local.ends_with(std::string(":") + portHex)) listenAddress = local.substr(0, 8);
  }
  EXPECT_EQ(listenAddress, "0100007F") << "listening socket of port " << server_.port() << " not on 127.0.0.1";
}

TEST(TcpStoreServerSetup, AnUnusableBindAddressIsAClearError) {
  // 192.0.2.1 (TEST-NET-1) is never an address of this host; no DNS is involved.
  std::string message = errorOf([] { TcpStoreServer server("192.0.2.1", 0); }, ErrorCode::SystemError);
  EXPECT_TRUE(contains(message, "192.0.2.1")) << message;
  TcpStoreServer first;
  message = errorOf([&] { TcpStoreServer second("127.0.0.1", first.port()); }, ErrorCode::SystemError);
  EXPECT_TRUE(contains(message, std::to_string(first.port()))) << message;
}

}  // namespace
}  // namespace tiercc
