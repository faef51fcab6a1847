// Which bytes of a window changed since they were last sent: the emulated Domain sends only
// these on signal(), so the peers' replicas equal the window without sending it whole.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tiercc {

/// [offset, offset + len) of a window. Trivially copyable: tables of them go on the wire.
struct ByteRange {
  std::uint64_t offset = 0;
  std::uint64_t len = 0;
};

/// The ranges where `now` differs from `before` (both `len` bytes): blocks of `blockBytes` are
/// compared, runs of changed blocks coalesce into one range, and each range is trimmed to its
/// first and last differing byte (so a neighbour's unchanged bytes at a block edge are not
/// rewritten). Ascending, disjoint, none empty.
std::vector<ByteRange> changedRanges(const std::byte* now, const std::byte* before, std::size_t len,
                                     std::size_t blockBytes = 4096);
/// The same into `out` (cleared first), so that a caller diffing on every signal reuses its capacity.
void changedRanges(const std::byte* now, const std::byte* before, std::size_t len, std::vector<ByteRange>& out,
                   std::size_t blockBytes = 4096);

}  // namespace tiercc
