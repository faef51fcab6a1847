#pragma once
// Large copies in pieces of at most kCopyPieceBytes.
//
// glibc's memcpy copies with `rep movsb` up to its rep_movsb_stop_threshold and with a vector
// loop above it. On this project's machine (AMD EPYC, glibc 2.36) the loop is the slower one:
// from memory, one memcpy of 1 to 16 MiB runs at 18.4-19.6 GB/s and the same bytes in 256 KiB
// pieces at 25.5-32.6 (1.4-1.7x); with the source in cache they are level to 4 MiB and the
// pieces 1.3x at 16 MiB (bench/bench_copy.cpp, docs/performance.md "Copies in pieces"). Where
// glibc takes `rep movsb` to the end, the pieces cost one call per 256 KiB.
#include <cstddef>
#include <cstring>

namespace tiercc {

inline constexpr std::size_t kCopyPieceBytes = std::size_t{256} << 10;

/// memcpy(dst, src, n) for buffers that do not overlap, in pieces of at most kCopyPieceBytes.
inline void copyBytes(void* dst, const void* src, std::size_t n) {
  auto* to = static_cast<std::byte*>(dst);
  const auto* from = static_cast<const std::byte*>(src);
  while (n > kCopyPieceBytes) {
    std::memcpy(to, from, kCopyPieceBytes);
    to += kCopyPieceBytes;
    from += kCopyPieceBytes;
    n -= kCopyPieceBytes;
  }
  if (n != 0) std::memcpy(to, from, n);
}

}  // namespace tiercc
