// Integer helpers shared by the pattern math (ring, halving-doubling, k-nomial, Bruck): wrapping
// rank arithmetic, powers of two and the block partition. Pure, O(1) or O(log p), no allocation.
#pragma once

#include <cstddef>
#include <utility>

namespace tiercc::pattern {

/// a mod p in [0, p), for negative a too (p >= 1).
constexpr int wrap(long long a, int p) {
  long long r = a % p;
  return static_cast<int>(r < 0 ? r + p : r);
}

/// ceil(log2 p) for p >= 1: the rounds of a doubling pattern over p ranks.
constexpr int ceilLog2(long long p) {
  int n = 0;
  while ((1LL << n) < p) ++n;
  return n;
}

/// Largest power of two <= p (p >= 1).
constexpr int floorPow2(int p) {
  int v = 1;
  while (v <= p / 2) v *= 2;
  return v;
}

/// First element of part `b` when n elements are split into `parts` nearly equal parts, the
/// first n % parts of them one larger. b == parts gives n.
constexpr std::size_t blockBegin(std::size_t n, std::size_t parts, std::size_t b) {
  const std::size_t base = n / parts, extra = n % parts;
  return b * base + (b < extra ? b : extra);
}

/// [begin, end) of part `i` of that split: [blockBegin(i), blockBegin(i + 1)).
constexpr std::pair<std::size_t, std::size_t> partition(std::size_t n, std::size_t parts, std::size_t i) {
  return {blockBegin(n, parts, i), blockBegin(n, parts, i + 1)};
}

}  // namespace tiercc::pattern
