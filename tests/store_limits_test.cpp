// The TCP store server under clients that would take it down (TcpStoreServer::Limits): it stays
// up, serves the others, and its memory stays bounded.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <thread>
#include <vector>

#include "bootstrap/store.hpp"
#include "tests/support/raw_store_socket.hpp"

namespace tiercc {
namespace {

using namespace std::chrono_literals;
using test::frameOf;
using test::RawSocket;
namespace proto = store_protocol;

constexpr auto kLongWait = 5s;  // deadlines that are not meant to expire
Deadline in(std::chrono::milliseconds timeout) { return Deadline::after(timeout); }

// ThreadSanitizer maps shadow memory for what every thread touches: the process's resident size
// then says nothing about what the server holds.
#if defined(__SANITIZE_THREAD__)
constexpr bool kResidentSizeMeansSomething = false;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
constexpr bool kResidentSizeMeansSomething = false;
#else
constexpr bool kResidentSizeMeansSomething = true;
#endif
#else
constexpr bool kResidentSizeMeansSomething = true;
#endif

std::size_t residentBytes() {
  std::ifstream statm("/proc/self/statm");
  std::size_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

void servesOthers(std::uint16_t port) {
  auto store = connectTcpStore("127.0.0.1", port, in(kLongWait));
  store->setString("alive", "yes");
  EXPECT_EQ(store->getString("alive", in(kLongWait)), "yes");
}

// 200 connections each announce a 64 MiB frame and send 1 KiB of it: 12.5 GiB announced, a
// few hundred KiB arrived, and that is what the server holds.
TEST(TcpStoreLimits, AnnouncedFramesCostNothingUntilTheirBytesArrive) {
  if (!kResidentSizeMeansSomething) GTEST_SKIP() << "ThreadSanitizer's shadow memory makes the resident size meaningless";
  TcpStoreServer server;
  const std::size_t before = residentBytes();
  std::vector<std::unique_ptr<RawSocket>> clients;
  for (int i = 0; i < 200; ++i) {
    clients.push_back(std::make_unique<RawSocket>(server.port()));
    clients.back()->send(frameOf(TcpStoreServer::kMaxFrameBytes, Bytes(1024, 7)));
  }
  servesOthers(server.port());  // after the 200, in accept order: they have been read
  const std::size_t grown = residentBytes() - std::min(before, residentBytes());
  EXPECT_LT(grown, std::size_t(64) << 20) << "the server grew by " << (grown >> 20) << " MiB";
}

// A client that stops in the middle of a frame (slowloris) is cut off after the frame time; one
// that is idle between frames is not (ranks sit idle for hours between collectives).
TEST(TcpStoreLimits, AClientThatStopsMidFrameIsCutOffAndAnIdleOneIsNot) {
  TcpStoreServer::Limits limits;
  limits.frameTime = 300ms;
  TcpStoreServer server("127.0.0.1", 0, limits);
  RawSocket idle(server.port());
  RawSocket slow(server.port());
  slow.send(Bytes{0x10, 0x00});  // half a header, then nothing
  const auto start = std::chrono::steady_clock::now();
  servesOthers(server.port());
  EXPECT_TRUE(slow.closedByPeer()) << "the slow client is still connected";
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  std::this_thread::sleep_for(400ms);  // past the frame time, but between frames
  idle.send(proto::encodeRequestFrame({proto::Op::Check, {"alive"}, {}, 0, 0}));
  const auto reply = idle.readReply();
  ASSERT_TRUE(reply) << "the idle client was cut off";
  EXPECT_EQ(reply->number, 1);
}

// A client that pipelines GETs of a 1 MiB value and never reads the replies is cut off once its
// unread replies pass the limit, instead of the server queueing 200 MiB for it.
TEST(TcpStoreLimits, AClientThatNeverReadsItsRepliesIsCutOff) {
  TcpStoreServer::Limits limits;
  limits.maxUnreadReplyBytes = 8u << 20;
  TcpStoreServer server("127.0.0.1", 0, limits);
  auto store = connectTcpStore("127.0.0.1", server.port(), in(kLongWait));
  store->set("big", Bytes(1 << 20, 1));
  const std::size_t before = residentBytes();
  RawSocket greedy(server.port());
  Bytes requests;
  for (int i = 0; i < 200; ++i) {
    const Bytes frame = proto::encodeRequestFrame({proto::Op::Get, {"big"}, {}, 0, 0});
    requests.insert(requests.end(), frame.begin(), frame.end());
  }
  greedy.send(requests);
  std::this_thread::sleep_for(500ms);  // the replies pile up
  servesOthers(server.port());
  const std::size_t grown = residentBytes() - std::min(before, residentBytes());
  EXPECT_LT(grown, std::size_t(64) << 20) << "the server grew by " << (grown >> 20) << " MiB";
  int replies = 0;
  while (greedy.readReply()) ++replies;
  EXPECT_LT(replies, 200) << "every reply was queued";
}

// Past the connection limit new connections are closed at once; a freed place is taken again.
TEST(TcpStoreLimits, ConnectionsBeyondTheLimitAreClosedAtOnce) {
  TcpStoreServer::Limits limits;
  limits.maxConnections = 4;
  TcpStoreServer server("127.0.0.1", 0, limits);
  auto answers = [](RawSocket& s) {
    s.send(proto::encodeRequestFrame({proto::Op::Check, {"x"}, {}, 0, 0}));
    return s.readReply().has_value();
  };
  std::vector<std::unique_ptr<RawSocket>> held;
  for (int i = 0; i < 4; ++i) {
    held.push_back(std::make_unique<RawSocket>(server.port()));
    ASSERT_TRUE(answers(*held.back())) << "connection " << i << " within the limit was refused";
  }
  RawSocket extra(server.port());
  EXPECT_TRUE(extra.closedByPeer()) << "a fifth connection was kept";
  held.pop_back();  // frees a place once the server sees it close
  bool servedAgain = false;
  for (int attempt = 0; attempt < 50 && !servedAgain; ++attempt) {
    RawSocket again(server.port());
    servedAgain = answers(again);
    if (!servedAgain) std::this_thread::sleep_for(20ms);
  }
  EXPECT_TRUE(servedAgain);
}

// Keys, values and the bytes held are bounded; a refused SET or ADD changes nothing, and the
// connection and the store go on serving.
TEST(TcpStoreLimits, LongKeysLargeValuesAndAFullStoreAreRefusedAndChangeNothing) {
  TcpStoreServer::Limits limits;
  limits.maxKeyBytes = 64;
  limits.maxValueBytes = 1 << 20;
  limits.maxTotalBytes = 4u << 20;
  TcpStoreServer server("127.0.0.1", 0, limits);
  auto store = connectTcpStore("127.0.0.1", server.port(), in(kLongWait));
  auto refused = [](auto call) {
    try {
      call();
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::InvalidArgument) << e.what();
      return std::string(e.what());
    }
    ADD_FAILURE() << "not refused";
    return std::string();
  };
  const std::string longKey(65, 'k');
  EXPECT_NE(refused([&] { store->setString(longKey, "v"); }).find("a key of 65 bytes is over the limit of 64"),
            std::string::npos);
  EXPECT_NE(refused([&] { store->check({"short", longKey}); }).find("a key of 65 bytes"), std::string::npos);
  EXPECT_NE(refused([&] {
              store->set("big", Bytes((1 << 20) + 1, 1));
            }).find("a value of 1048577 bytes is over the limit of 1048576"),
            std::string::npos);
  EXPECT_FALSE(store->check({"big"}));
  for (int i = 0; i < 3; ++i) store->set("part" + std::to_string(i), Bytes(1 << 20, 2));
  const std::string full = refused([&] { store->set("part3", Bytes(1 << 20, 3)); });
  EXPECT_NE(full.find("store: full: it holds"), std::string::npos) << full;
  EXPECT_FALSE(store->check({"part3"})) << "a refused SET was stored";
  store->set("part0", Bytes(1 << 20, 4));  // replacing a value frees what it held
  store->erase("part1");
  store->set("part3", Bytes(1 << 20, 3));  // room again after the erase
  EXPECT_EQ(store->get("part3", in(kLongWait)), Bytes(1 << 20, 3));
  EXPECT_EQ(store->get("part0", in(kLongWait)), Bytes(1 << 20, 4));
  servesOthers(server.port());
}

}  // namespace
}  // namespace tiercc
