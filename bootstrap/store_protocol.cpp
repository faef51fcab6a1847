// Encoding and validating decoding of store frames, plus the store semantics both stores share.
// Every length read off the wire is checked against the bytes that remain before it is used,
// so a hostile or corrupt peer gets InvalidArgument, never an over-read or a huge allocation.
#include "bootstrap/store_protocol.hpp"

#include <algorithm>
#include <charconv>
#include <limits>

#include "core/errors.hpp"

namespace tiercc::store_protocol {
namespace {

class Writer {
 public:
  explicit Writer(Bytes& out) : out_(out) {}
  void u8(std::uint8_t v) { out_.push_back(v); }
  void u32(std::uint32_t v) { littleEndian(v, 4); }
  void i64(std::int64_t v) { littleEndian(static_cast<std::uint64_t>(v), 8); }
  void bytes(std::span<const std::uint8_t> data) {
    u32(static_cast<std::uint32_t>(data.size()));
    out_.insert(out_.end(), data.begin(), data.end());
  }
  void string(const std::string& s) { bytes({reinterpret_cast<const std::uint8_t*>(s.data()), s.size()}); }
  void strings(const std::vector<std::string>& list) {
    u32(static_cast<std::uint32_t>(list.size()));
    for (const auto& s : list) string(s);
  }

 private:
  void littleEndian(std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  Bytes& out_;
};

class Reader {
 public:
  explicit Reader(std::span<const std::uint8_t> in) : in_(in) {}
  std::uint8_t u8(const char* what) { return take(1, what)[0]; }
  std::uint32_t u32(const char* what) { return static_cast<std::uint32_t>(littleEndian(4, what)); }
  std::int64_t i64(const char* what) { return static_cast<std::int64_t>(littleEndian(8, what)); }
  Bytes bytes(const char* what) {
    auto data = take(u32(what), what);
    return Bytes(data.begin(), data.end());
  }
  std::string string(const char* what) {
    auto data = take(u32(what), what);
    return std::string(data.begin(), data.end());
  }
  std::vector<std::string> strings(const char* what) {
    std::uint32_t count = u32(what);
    // Each string needs at least its 4-byte length: bounds the reservation by the input size.
    if (count > in_.size() / 4) {
      fail(ErrorCode::InvalidArgument, "store protocol: ", what, " count ", count, " exceeds the ", in_.size(),
           " bytes left");
    }
    std::vector<std::string> list;
    list.reserve(count);
    for (std::uint32_t i = 0; i < count; ++i) list.push_back(string(what));
    return list;
  }
  void finish() const {
    if (!in_.empty()) fail(ErrorCode::InvalidArgument, "store protocol: ", in_.size(), " trailing bytes");
  }

 private:
  std::span<const std::uint8_t> take(std::size_t n, const char* what) {
    if (n > in_.size()) {
      fail(ErrorCode::InvalidArgument, "store protocol: truncated ", what, ": needs ", n, " bytes, ", in_.size(),
           " left");
    }
    auto head = in_.first(n);
    in_ = in_.subspan(n);
    return head;
  }
  std::uint64_t littleEndian(std::size_t n, const char* what) {
    auto data = take(n, what);
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < n; ++i) v |= std::uint64_t{data[i]} << (8 * i);
    return v;
  }
  std::span<const std::uint8_t> in_;
};

// Reserves the header, lets `body` write, then fills the header in with the body's length.
template <typename WriteBody>
Bytes encodeFrame(std::size_t sizeHint, WriteBody writeBody) {
  Bytes out(kHeaderBytes, 0);
  out.reserve(kHeaderBytes + sizeHint);
  Writer w(out);
  writeBody(w);
  auto length = static_cast<std::uint32_t>(out.size() - kHeaderBytes);
  for (std::size_t i = 0; i < kHeaderBytes; ++i) out[i] = static_cast<std::uint8_t>(length >> (8 * i));
  return out;
}

std::size_t requestSizeHint(const Request& request) {
  std::size_t size = 32 + request.value.size();
  for (const auto& key : request.keys) size += 4 + key.size();
  return size;
}

void checkKeyCount(const Request& request) {
  if (request.op == Op::Hello) {
    if (!request.keys.empty()) fail(ErrorCode::InvalidArgument, "store protocol: HELLO takes no key");
    return;
  }
  bool multi = request.op == Op::Wait || request.op == Op::Check;
  if (!multi && request.keys.size() != 1) {
    fail(ErrorCode::InvalidArgument, "store protocol: ", toString(request.op), " takes one key, not ",
         request.keys.size());
  }
}

void checkTimeout(std::int64_t timeoutMs) {
  if (timeoutMs < kWaitForever) {
    fail(ErrorCode::InvalidArgument, "store protocol: invalid timeout ", timeoutMs, " ms");
  }
}

}  // namespace

const char* toString(Op op) {
  switch (op) {
    case Op::Set:
      return "SET";
    case Op::Get:
      return "GET";
    case Op::Add:
      return "ADD";
    case Op::Wait:
      return "WAIT";
    case Op::Check:
      return "CHECK";
    case Op::Erase:
      return "ERASE";
    case Op::Hello:
      return "HELLO";
  }
  return "unknown op";
}

Bytes encodeRequestFrame(const Request& request) {
  checkKeyCount(request);
  std::size_t hint = requestSizeHint(request);
  if (hint > TcpStoreServer::kMaxFrameBytes) {
    fail(ErrorCode::InvalidArgument, "store: ", toString(request.op), " of about ", hint,
         " bytes exceeds the frame limit of ", TcpStoreServer::kMaxFrameBytes, " bytes");
  }
  return encodeFrame(hint, [&](Writer& w) {
    w.u8(static_cast<std::uint8_t>(request.op));
    switch (request.op) {
      case Op::Set:
        w.string(request.keys[0]);
        w.bytes(request.value);
        break;
      case Op::Get:
        w.string(request.keys[0]);
        w.i64(request.timeoutMs);
        break;
      case Op::Add:
        w.string(request.keys[0]);
        w.i64(request.delta);
        break;
      case Op::Wait:
        w.strings(request.keys);
        w.i64(request.timeoutMs);
        break;
      case Op::Check:
        w.strings(request.keys);
        break;
      case Op::Erase:
        w.string(request.keys[0]);
        break;
      case Op::Hello:
        w.bytes(request.value);
        break;
    }
  });
}

Bytes encodeReplyFrame(const Reply& reply) {
  return encodeFrame(16 + reply.value.size() + reply.message.size(), [&](Writer& w) {
    w.u8(static_cast<std::uint8_t>(reply.status));
    switch (reply.status) {
      case Status::Ok:
        w.bytes(reply.value);
        w.i64(reply.number);
        break;
      case Status::Timeout:
        w.strings(reply.missingKeys);
        break;
      case Status::Error:
        w.string(reply.message);
        break;
    }
  });
}

std::uint32_t decodeFrameLength(const FrameHeader& header, std::uint32_t limit) {
  std::uint32_t length = 0;
  for (std::size_t i = 0; i < kHeaderBytes; ++i) length |= std::uint32_t{header[i]} << (8 * i);
  if (length == 0) fail(ErrorCode::InvalidArgument, "store protocol: empty frame");
  if (length > limit) {
    fail(ErrorCode::InvalidArgument, "store protocol: frame of ", length, " bytes exceeds the limit of ", limit,
         " bytes");
  }
  return length;
}

Request decodeRequest(std::span<const std::uint8_t> body) {
  Reader r(body);
  Request request;
  std::uint8_t op = r.u8("opcode");
  request.op = static_cast<Op>(op);
  switch (request.op) {
    case Op::Set:
      request.keys = {r.string("key")};
      request.value = r.bytes("value");
      break;
    case Op::Get:
      request.keys = {r.string("key")};
      request.timeoutMs = r.i64("timeout");
      break;
    case Op::Add:
      request.keys = {r.string("key")};
      request.delta = r.i64("delta");
      break;
    case Op::Wait:
      request.keys = r.strings("key");
      request.timeoutMs = r.i64("timeout");
      break;
    case Op::Check:
      request.keys = r.strings("key");
      break;
    case Op::Erase:
      request.keys = {r.string("key")};
      break;
    case Op::Hello:
      request.value = r.bytes("secret");
      break;
    default:
      fail(ErrorCode::InvalidArgument, "store protocol: unknown opcode ", static_cast<int>(op));
  }
  r.finish();
  checkTimeout(request.timeoutMs);
  return request;
}

Reply decodeReply(std::span<const std::uint8_t> body) {
  Reader r(body);
  Reply reply;
  std::uint8_t status = r.u8("status");
  reply.status = static_cast<Status>(status);
  switch (reply.status) {
    case Status::Ok:
      reply.value = r.bytes("value");
      reply.number = r.i64("number");
      break;
    case Status::Timeout:
      reply.missingKeys = r.strings("missing key");
      break;
    case Status::Error:
      reply.message = r.string("error message");
      break;
    default:
      fail(ErrorCode::InvalidArgument, "store protocol: unknown reply status ", static_cast<int>(status));
  }
  r.finish();
  return reply;
}

std::int64_t addToCounter(KeyValueMap& data, const std::string& key, std::int64_t delta) {
  auto it = data.find(key);
  std::int64_t current = 0;
  if (it != data.end()) {
    const char* first = reinterpret_cast<const char*>(it->second.data());
    const char* last = first + it->second.size();
    auto [end, ec] = std::from_chars(first, last, current);
    if (ec != std::errc() || end != last || first == last) {
      fail(ErrorCode::InvalidArgument, "store: add() on key '", key, "' whose value is not an integer");
    }
  }
  std::int64_t result = 0;
  if (__builtin_add_overflow(current, delta, &result)) {
    fail(ErrorCode::InvalidArgument, "store: add(", delta, ") on key '", key, "' overflows ", current);
  }
  std::string text = std::to_string(result);
  data[key] = Bytes(text.begin(), text.end());
  return result;
}

std::vector<std::string> missingKeys(const KeyValueMap& data, const std::vector<std::string>& keys) {
  std::vector<std::string> missing;
  for (const auto& key : keys) {
    if (!data.contains(key)) missing.push_back(key);
  }
  return missing;
}

bool sameSecret(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b) {
  // Every byte of the longer one is looked at; a difference anywhere, or in length, shows only
  // in the accumulated bits.
  const std::size_t n = std::max(a.size(), b.size());
  unsigned difference = a.size() == b.size() ? 0u : 1u;
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned x = i < a.size() ? a[i] : 0u;
    const unsigned y = i < b.size() ? b[i] : 0u;
    difference |= x ^ y;
  }
  return difference == 0;
}

std::string quoteKeys(const std::vector<std::string>& keys) {
  std::string out;
  for (const auto& key : keys) {
    if (!out.empty()) out += ", ";
    out += "'" + key + "'";
  }
  return out;
}

std::string timeoutMessage(std::chrono::milliseconds waited, const std::vector<std::string>& missing) {
  return concat("store: timed out after ", waited.count(), " ms waiting for key(s) ", quoteKeys(missing));
}

}  // namespace tiercc::store_protocol
