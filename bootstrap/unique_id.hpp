// The unique id's 128 bytes (tiercc_get_unique_id, NCCL's pattern): where the store the id's
// maker hosts listens, the secret it requires, and a nonce that gives the id's communicators a
// store namespace of their own. Decoding checks everything, so that an id that was never
// broadcast, arrived damaged or comes from another version is a clear error, not a hang.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace tiercc {

inline constexpr std::size_t kUniqueIdBytes = 128;
using UniqueIdBytes = std::array<std::uint8_t, kUniqueIdBytes>;

struct UniqueIdFields {
  std::string host;  ///< the store's address (numeric, at most 63 characters)
  std::uint16_t port = 0;
  std::string secret;  ///< the store's secret, 64 hex digits (32 random bytes)
  std::string nonce;   ///< 32 hex digits (16 random bytes): the namespace "id/<nonce>/"
};

/// InvalidArgument when a field does not fit (host too long, port 0, secret or nonce not hex of
/// the right length).
UniqueIdBytes encodeUniqueId(const UniqueIdFields& fields);

/// InvalidArgument saying what is wrong: all zeros (never made, or not received from the rank
/// that made it), not an id, another version, damaged (checksum).
UniqueIdFields decodeUniqueId(const UniqueIdBytes& bytes);

}  // namespace tiercc
