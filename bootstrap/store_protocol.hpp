// The store's wire format, shared by TcpStoreServer and the TCP client, and the store semantics
// every Store implementation shares (counters as decimal text, timeout messages).
// A frame is a 4-byte little-endian length and a body; the decoders trust nothing they are given.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "bootstrap/store.hpp"

namespace tiercc::store_protocol {

/// Hello: the first request on a connection to a store that has a secret; its value is the secret.
enum class Op : std::uint8_t { Set = 1, Get = 2, Add = 3, Wait = 4, Check = 5, Erase = 6, Hello = 7 };
enum class Status : std::uint8_t { Ok = 0, Timeout = 1, Error = 2 };

inline constexpr std::size_t kHeaderBytes = 4;
using FrameHeader = std::array<std::uint8_t, kHeaderBytes>;
/// timeoutMs of a GET/WAIT that waits as long as it takes.
inline constexpr std::int64_t kWaitForever = -1;
/// Longer timeouts mean "forever" too (as in Deadline::after), which keeps timer arithmetic in range.
inline constexpr std::int64_t kLongestTimeoutMs = 365LL * 24 * 3600 * 1000;
/// A reply carries a request's value plus a few fields, so it may exceed the request limit a little.
inline constexpr std::uint32_t kMaxReplyBytes = TcpStoreServer::kMaxFrameBytes + 64;

struct Request {
  Op op = Op::Check;
  std::vector<std::string> keys;  ///< exactly one, except for Wait and Check (any) and Hello (none)
  Bytes value;                    ///< Set: the value; Hello: the secret
  std::int64_t delta = 0;         ///< Add
  std::int64_t timeoutMs = 0;     ///< Get, Wait: kWaitForever or >= 0
};

struct Reply {
  Status status = Status::Ok;
  Bytes value;                           ///< Ok to Get: the value
  std::int64_t number = 0;               ///< Ok to Add: the new value; to Check: 1 when all exist
  std::vector<std::string> missingKeys;  ///< Timeout: the keys still missing
  std::string message;                   ///< Error: what was wrong
};

/// "SET", "GET", ...
const char* toString(Op op);

/// Header + body of a request; InvalidArgument when it would exceed TcpStoreServer::kMaxFrameBytes.
Bytes encodeRequestFrame(const Request& request);
/// Header + body of a reply.
Bytes encodeReplyFrame(const Reply& reply);
/// The body length a header announces; InvalidArgument when it is 0 or over `limit`.
std::uint32_t decodeFrameLength(const FrameHeader& header, std::uint32_t limit);
/// Parses a request body; InvalidArgument on anything malformed (truncated, trailing, unknown op).
Request decodeRequest(std::span<const std::uint8_t> body);
/// Parses a reply body; InvalidArgument on anything malformed.
Reply decodeReply(std::span<const std::uint8_t> body);

// ---- Store semantics shared by the in-process store and the TCP server ----

using KeyValueMap = std::unordered_map<std::string, Bytes>;

/// Adds delta to the counter at key, kept as decimal text so that get() shows it readably
/// (missing = 0); InvalidArgument naming the key if the value is not an integer or would overflow.
std::int64_t addToCounter(KeyValueMap& data, const std::string& key, std::int64_t delta);
/// The keys not in data, in the order given.
std::vector<std::string> missingKeys(const KeyValueMap& data, const std::vector<std::string>& keys);
/// Whether the secrets are equal, in time that depends on their lengths only (not on where they
/// differ), so that timing the store's answers tells nothing about the secret.
bool sameSecret(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b);
/// "'a', 'b'"
std::string quoteKeys(const std::vector<std::string>& keys);
/// "store: timed out after 2000 ms waiting for key(s) 'a', 'b'"
std::string timeoutMessage(std::chrono::milliseconds waited, const std::vector<std::string>& missing);

}  // namespace tiercc::store_protocol
