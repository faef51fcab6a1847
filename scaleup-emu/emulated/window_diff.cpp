// Block-wise window diff (see window_diff.hpp).
#include "scaleup-emu/emulated/window_diff.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace tiercc {

namespace {

// The trims below step 8 bytes at a time, then finish byte by byte: up to a block each per range.
std::uint64_t word(const std::byte* p) {
  std::uint64_t w;
  std::memcpy(&w, p, sizeof w);
  return w;
}

std::size_t firstDifference(const std::byte* a, const std::byte* b, std::size_t len) {
  std::size_t i = 0;
  while (len - i >= 8 && word(a + i) == word(b + i)) i += 8;
  while (i < len && a[i] == b[i]) ++i;
  return i;
}

// One past the last differing byte; 0 when none differs.
std::size_t endOfDifference(const std::byte* a, const std::byte* b, std::size_t len) {
  std::size_t i = len;
  while (i >= 8 && word(a + i - 8) == word(b + i - 8)) i -= 8;
  while (i > 0 && a[i - 1] == b[i - 1]) --i;
  return i;
}

}  // namespace

std::vector<ByteRange> changedRanges(const std::byte* now, const std::byte* before, std::size_t len,
                                     std::size_t blockBytes) {
  std::vector<ByteRange> out;
  changedRanges(now, before, len, out, blockBytes);
  return out;
}

void changedRanges(const std::byte* now, const std::byte* before, std::size_t len, std::vector<ByteRange>& out,
                   std::size_t blockBytes) {
  out.clear();
  if (blockBytes == 0) blockBytes = len;
  std::size_t runStart = 0, runEnd = 0;  // block-aligned bounds of the current run of changed blocks
  bool inRun = false;
  auto closeRun = [&] {
    // The run's first and last blocks differ somewhere, so the trimmed range is never empty.
    std::size_t b = runStart + firstDifference(now + runStart, before + runStart, runEnd - runStart);
    const std::size_t lastBlock = runEnd - 1 - (runEnd - 1 - runStart) % blockBytes;
    std::size_t e = lastBlock + endOfDifference(now + lastBlock, before + lastBlock, runEnd - lastBlock);
    out.push_back({b, e - b});
    inRun = false;
  };
  for (std::size_t off = 0; off < len; off += blockBytes) {
    const std::size_t n = std::min(blockBytes, len - off);
    if (std::memcmp(now + off, before + off, n) != 0) {
      if (!inRun) runStart = off;
      inRun = true;
      runEnd = off + n;
    } else if (inRun) {
      closeRun();
    }
  }
  if (inRun) closeRun();
}

}  // namespace tiercc
