// Shared arithmetic of the plan builders: how many of a pattern's messages cross domains on a
// shape. Linear or n log n in the number of ranks, so tiers-of-100k-ranks plans stay cheap.
#pragma once

#include <cstdint>

#include "plan/plan.hpp"

namespace tiercc::planmath {

inline std::uint64_t ceilDiv(std::uint64_t a, std::uint64_t b) { return b ? (a + b - 1) / b : 0; }

/// Ranks whose ring successor (rank + 1 mod p, rank order) is in another domain.
int ringCrossings(const Shape& s);
/// Pairs (i, i XOR mask) among the first `p2` ranks of `order`-space that cross domains,
/// counted once per rank (so twice per pair). `real(i)` maps pattern index to rank.
template <class RealRank>
int butterflyCrossings(const Shape& s, int p2, int mask, RealRank real) {
  int n = 0;
  for (int i = 0; i < p2; ++i)
    if (s.domainOf[real(i)] != s.domainOf[real(i ^ mask)]) ++n;
  return n;
}
/// Ranks r whose message to (r - distance mod p) crosses domains (Bruck's pattern).
int shiftCrossings(const Shape& s, int distance);
/// Edges of the k-nomial tree rooted at `root` whose ends are in different domains.
int knomialCrossings(const Shape& s, int root, int radix);
/// Levels of a k-nomial tree over p ranks: ceil(log_radix p).
int knomialDepth(int p, int radix);
/// Largest power of two <= p (p >= 1).
int floorPow2(int p);
/// ceil(log2 p) for p >= 1.
int ceilLog2(int p);

/// The bytes of a pattern step, as a Step: busiest link and totals split by tier.
Step patternStep(std::string what, double latencySteps, double busiestBytes, std::uint64_t crossingBytes,
                 std::uint64_t localBytes, bool anyCrossing);

/// `st` with who sends to whom: `messageBytes` from each sender to each of its receivers.
inline Step withExchange(Step st, Exchange exchange, double messageBytes, int param = 0) {
  st.exchange = exchange;
  st.messageBytes = messageBytes;
  st.exchangeParam = param;
  return st;
}

}  // namespace tiercc::planmath
