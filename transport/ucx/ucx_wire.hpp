// How the UCX transport lays its traffic on ucp tags. A 64-bit ucp tag carries the kind of
// message, the sender's rank and a per-peer sequence number, so each receive matches exactly the
// message posted in the same place of the sender's order; the caller's own 64-bit tag and length
// travel in a small header message and are checked against the receive.
#pragma once

#include <ucp/api/ucp.h>

#include <cstdint>

namespace tiercc::ucxnet {

enum class Kind : std::uint64_t { Header = 0, Payload = 1, Notify = 2 };

constexpr int kRankBits = 24;
constexpr int kSeqBits = 38;
constexpr ucp_tag_t kFullMask = ~ucp_tag_t{0};
constexpr std::int64_t kMaxRanks = std::int64_t{1} << kRankBits;

/// Sequence numbers wrap after 2^38 messages per peer: long after any of them is outstanding.
constexpr ucp_tag_t makeTag(Kind kind, int senderRank, std::uint64_t seq) {
  return (static_cast<std::uint64_t>(kind) << (kRankBits + kSeqBits)) |
         ((static_cast<std::uint64_t>(senderRank) & ((std::uint64_t{1} << kRankBits) - 1)) << kSeqBits) |
         (seq & ((std::uint64_t{1} << kSeqBits) - 1));
}

/// Precedes every payload of isend: what the receive is checked against.
struct SendHeader {
  std::uint64_t tag;
  std::uint64_t len;
};

/// Sent after a one-sided write's data is in place; completes the peer's inotify.
struct Notification {
  std::uint64_t imm;
  std::uint64_t len;
};

}  // namespace tiercc::ucxnet
