// Tests of the store's wire format (store_protocol.hpp) and of address parsing: round trips,
// and every truncated, extended or oversized input rejected with a clear error.
#include <gtest/gtest.h>

#include <span>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "tests/support/expect_error.hpp"
#include "tiercc/tiercc.hpp"
#include "bootstrap/store.hpp"
#include "bootstrap/store_protocol.hpp"

namespace tiercc {
namespace {

namespace proto = store_protocol;

using test::contains;
using test::errorOf;

// ---------------------------------------------------------------------------------------------
// The wire format.

std::vector<proto::Request> sampleRequests() {
  return {
      {proto::Op::Set, {"key"}, {1, 2, 3}, 0, 0}, {proto::Op::Get, {"key"}, {}, 0, 1500},
      {proto::Op::Add, {"n"}, {}, -42, 0},        {proto::Op::Wait, {"a", "", "c"}, {}, 0, proto::kWaitForever},
      {proto::Op::Check, {"a", "b"}, {}, 0, 0},   {proto::Op::Erase, {"gone"}, {}, 0, 0},
  };
}

std::span<const std::uint8_t> bodyOf(const Bytes& frame) { return std::span(frame).subspan(proto::kHeaderBytes); }

TEST(StoreProtocol, RequestsRoundTrip) {
  for (const auto& request : sampleRequests()) {
    proto::Request decoded = proto::decodeRequest(bodyOf(proto::encodeRequestFrame(request)));
    EXPECT_EQ(decoded.op, request.op);
    EXPECT_EQ(decoded.keys, request.keys);
    EXPECT_EQ(decoded.value, request.value);
    EXPECT_EQ(decoded.delta, request.delta);
    EXPECT_EQ(decoded.timeoutMs, request.timeoutMs);
  }
}

TEST(StoreProtocol, EveryTruncatedOrExtendedRequestIsRejected) {
  for (const auto& request : sampleRequests()) {
    Bytes frame = proto::encodeRequestFrame(request);
    auto body = bodyOf(frame);
    for (std::size_t n = 0; n < body.size(); ++n) {
      errorOf([&] { proto::decodeRequest(body.first(n)); }, ErrorCode::InvalidArgument);
    }
    Bytes longer(body.begin(), body.end());
    longer.push_back(0);
    errorOf([&] { proto::decodeRequest(longer); }, ErrorCode::InvalidArgument);
  }
}

TEST(StoreProtocol, RepliesRoundTripAndTruncationsAreRejected) {
  std::vector<proto::Reply> replies = {{proto::Status::Ok, {9, 8}, -5, {}, {}},
                                       {proto::Status::Timeout, {}, 0, {"x", "y"}, {}},
                                       {proto::Status::Error, {}, 0, {}, "bad"}};
  for (const auto& reply : replies) {
    Bytes frame = proto::encodeReplyFrame(reply);
    proto::Reply decoded = proto::decodeReply(bodyOf(frame));
    EXPECT_EQ(decoded.status, reply.status);
    EXPECT_EQ(decoded.value, reply.value);
    EXPECT_EQ(decoded.number, reply.number);
    EXPECT_EQ(decoded.missingKeys, reply.missingKeys);
    EXPECT_EQ(decoded.message, reply.message);
    auto body = bodyOf(frame);
    for (std::size_t n = 0; n < body.size(); ++n) {
      errorOf([&] { proto::decodeReply(body.first(n)); }, ErrorCode::InvalidArgument);
    }
  }
}

TEST(StoreProtocol, FrameLengthsAreBounded) {
  constexpr std::uint32_t kLimit = 1000;
  EXPECT_EQ(proto::decodeFrameLength({0xE8, 0x03, 0, 0}, kLimit), 1000u);
  errorOf([] { proto::decodeFrameLength({0xE9, 0x03, 0, 0}, kLimit); }, ErrorCode::InvalidArgument);
  errorOf([] { proto::decodeFrameLength({0, 0, 0, 0}, kLimit); }, ErrorCode::InvalidArgument);
  errorOf([] { proto::encodeRequestFrame({proto::Op::Get, {"a", "b"}, {}, 0, 0}); }, ErrorCode::InvalidArgument);
}

// ---------------------------------------------------------------------------------------------
// Address parsing.

TEST(ParseHostPort, AcceptsHostsNamesAndBracketedIpv6) {
  struct Case {
    const char* text;
    const char* host;
    std::uint16_t port;
  };
  for (const Case& c : {Case{"127.0.0.1:29500", "127.0.0.1", 29500}, Case{"localhost:1", "localhost", 1},
                        Case{"[::1]:80", "::1", 80}, Case{"node-7.cluster:65535", "node-7.cluster", 65535}}) {
    std::string host;
    std::uint16_t port = 0;
    parseHostPort(c.text, host, port);
    EXPECT_EQ(host, c.host) << c.text;
    EXPECT_EQ(port, c.port) << c.text;
  }
}

TEST(ParseHostPort, RejectsMalformedAddressesQuotingThem) {
  for (const char* text : {"", "host", "host:", ":80", "host:0", "host:65536", "host:8o", "host:-1", "host:+80",
                           "host:99999999999999999999", "::1:80", "[::1]", "[::1]80", "[]:80", "[::1:80"}) {
    std::string host = "unchanged";
    std::uint16_t port = 7;
    std::string message = errorOf([&] { parseHostPort(text, host, port); }, ErrorCode::InvalidArgument);
    EXPECT_TRUE(contains(message, std::string("'") + text + "'")) << message;
    EXPECT_EQ(host, "unchanged");
    EXPECT_EQ(port, 7);
  }
}
}  // namespace
}  // namespace tiercc
