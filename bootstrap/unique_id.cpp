#include "bootstrap/unique_id.hpp"

#include <algorithm>
#include <cstring>

#include "core/errors.hpp"
#include "core/random_bytes.hpp"

namespace tiercc {
namespace {

// Layout: magic "TCID" | version | host length | port (big endian) | host (64, zero padded) |
// secret (32) | nonce (16) | FNV-1a of everything before it (4, big endian) | zeros.
constexpr std::uint8_t kMagic[4] = {'T', 'C', 'I', 'D'};
constexpr std::uint8_t kVersion = 1;
constexpr std::size_t kHostAt = 8, kHostBytes = 64, kSecretAt = kHostAt + kHostBytes, kSecretBytes = 32,
                      kNonceAt = kSecretAt + kSecretBytes, kNonceBytes = 16, kSumAt = kNonceAt + kNonceBytes;
static_assert(kSumAt + 4 <= kUniqueIdBytes);

std::uint32_t fnv1a(const std::uint8_t* p, std::size_t n) {
  std::uint32_t h = 2166136261u;
  for (std::size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 16777619u;
  return h;
}

void putBig(std::uint8_t* p, std::uint32_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i, v >>= 8) p[i] = static_cast<std::uint8_t>(v);
}

std::uint32_t getBig(const std::uint8_t* p, int bytes) {
  std::uint32_t v = 0;
  for (int i = 0; i < bytes; ++i) v = v << 8 | p[i];
  return v;
}

int hexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

void fromHex(const std::string& hex, std::uint8_t* out, std::size_t bytes, const char* what) {
  bool ok = hex.size() == 2 * bytes;
  for (std::size_t i = 0; ok && i < bytes; ++i) {
    const int hi = hexDigit(hex[2 * i]), lo = hexDigit(hex[2 * i + 1]);
    ok = hi >= 0 && lo >= 0;
    out[i] = static_cast<std::uint8_t>(hi << 4 | lo);
  }
  if (!ok) fail(ErrorCode::InvalidArgument, "unique id: the ", what, " must be ", 2 * bytes, " lower-case hex digits");
}

}  // namespace

UniqueIdBytes encodeUniqueId(const UniqueIdFields& fields) {
  TIERCC_REQUIRE_ARG(!fields.host.empty() && fields.host.size() < kHostBytes, "unique id: the store's address '",
                     fields.host, "' must have 1 to ", kHostBytes - 1, " characters");
  TIERCC_REQUIRE_ARG(fields.port != 0, "unique id: the store's port must not be 0");
  UniqueIdBytes id{};
  std::memcpy(id.data(), kMagic, sizeof kMagic);
  id[4] = kVersion;
  id[5] = static_cast<std::uint8_t>(fields.host.size());
  putBig(&id[6], fields.port, 2);
  std::memcpy(&id[kHostAt], fields.host.data(), fields.host.size());
  fromHex(fields.secret, &id[kSecretAt], kSecretBytes, "secret");
  fromHex(fields.nonce, &id[kNonceAt], kNonceBytes, "nonce");
  putBig(&id[kSumAt], fnv1a(id.data(), kSumAt), 4);
  return id;
}

UniqueIdFields decodeUniqueId(const UniqueIdBytes& id) {
  if (std::all_of(id.begin(), id.end(), [](std::uint8_t b) { return b == 0; }))
    fail(ErrorCode::InvalidArgument,
         "the unique id is all zeros: it was not made by tiercc_get_unique_id (UniqueId::create), or this rank did "
         "not receive it from the rank that made it (did that rank fail?)");
  if (std::memcmp(id.data(), kMagic, sizeof kMagic) != 0)
    fail(ErrorCode::InvalidArgument, "not a tiercc unique id (its first bytes are not \"TCID\")");
  if (id[4] != kVersion)
    fail(ErrorCode::InvalidArgument, "the unique id has version ", int{id[4]}, ", this tiercc reads version ",
         int{kVersion}, " (every rank must run the same tiercc)");
  if (getBig(&id[kSumAt], 4) != fnv1a(id.data(), kSumAt))
    fail(ErrorCode::InvalidArgument,
         "the unique id is damaged (its checksum differs): every rank must receive its 128 bytes unchanged");
  const std::size_t hostLength = id[5];
  if (hostLength == 0 || hostLength >= kHostBytes || getBig(&id[6], 2) == 0)
    fail(ErrorCode::InvalidArgument, "the unique id names no store (address length ", hostLength, ", port ",
         getBig(&id[6], 2), ")");
  UniqueIdFields fields;
  fields.host.assign(reinterpret_cast<const char*>(&id[kHostAt]), hostLength);
  fields.port = static_cast<std::uint16_t>(getBig(&id[6], 2));
  fields.secret = toHex(&id[kSecretAt], kSecretBytes);
  fields.nonce = toHex(&id[kNonceAt], kNonceBytes);
  return fields;
}

}  // namespace tiercc
