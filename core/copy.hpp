#pragma once
// Large copies in pieces of at most kCopyPieceBytes.
//
// glibc's memcpy copies with `rep movsb` up to its rep_movsb_stop_threshold and with a vector
// loop above it. On this project's machine (AMD EPYC, glibc 2.36) the loop is the slower one:
// copies of up to 512 KiB run at 37-38 GB/s from memory, one memcpy of 1 MiB or more at 19-24;
// the same bytes in 256 KiB pieces stay at 25-37 GB/s to 16 MiB (bench/bench_copy.cpp: 1.5-1.7x
// from 1 MiB when the source is out of cache, 1.3x at 16 MiB when it is not). Where glibc takes
// `rep movsb` to the end (Intel's default), the pieces cost one call per 256 KiB.
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
