// copyBytes (core/copy.hpp): every byte of the range copied, none beside it touched, at the
// sizes around its piece boundary and at unaligned ends.
#include "core/copy.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

namespace tiercc {
namespace {

TEST(CopyBytes, CopiesExactlyTheRangeAcrossPieceBoundaries) {
  const std::size_t piece = kCopyPieceBytes;
  for (std::size_t n :
       {std::size_t{0}, std::size_t{1}, std::size_t{63}, piece - 1, piece, piece + 1, 2 * piece, 3 * piece + 7}) {
    for (std::size_t offset : {std::size_t{0}, std::size_t{3}}) {
      SCOPED_TRACE(testing::Message() << n << " bytes at offset " << offset);
      std::vector<std::byte> src(n + 2 * offset + 16), dst(src.size(), std::byte{0xEE});
      // No period that divides a piece: a piece read from the wrong place shows.
      for (std::size_t i = 0; i < src.size(); ++i)
        src[i] = static_cast<std::byte>((i * 131 + 7) ^ (i >> 8) ^ (i >> 16));
      copyBytes(dst.data() + offset + 8, src.data() + offset, n);
      for (std::size_t i = 0; i < dst.size(); ++i) {
        const bool inside = i >= offset + 8 && i < offset + 8 + n;
        const std::byte want = inside ? src[i - 8] : std::byte{0xEE};
        if (dst[i] != want) FAIL() << "byte " << i << " is " << int(dst[i]) << ", expected " << int(want);
      }
    }
  }
}

}  // namespace
}  // namespace tiercc
