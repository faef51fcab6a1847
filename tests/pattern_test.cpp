// The pattern math of collectives/pattern, checked by simulating each pattern on abstract
// blocks: every block reduced or delivered exactly once and ending where it belongs, for
// p = 1..17, a few large p, every root and radix 2..4. No ranks, no transport.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <vector>

#include "plan/pattern/bruck.hpp"
#include "plan/pattern/halving_doubling.hpp"
#include "plan/pattern/knomial.hpp"
#include "plan/pattern/pairwise.hpp"
#include "plan/pattern/ring.hpp"

namespace tiercc::pattern {
namespace {

std::vector<int> sizes(std::initializer_list<int> large) {
  std::vector<int> out;
  for (int p = 1; p <= 17; ++p) out.push_back(p);
  out.insert(out.end(), large);
  return out;
}

TEST(Pattern, Helpers) {
  EXPECT_EQ(wrap(-1, 5), 4);
  EXPECT_EQ(wrap(-10, 5), 0);
  EXPECT_EQ(wrap(12, 5), 2);
  EXPECT_EQ(ceilLog2(1), 0);
  EXPECT_EQ(ceilLog2(5), 3);
  EXPECT_EQ(ceilLog2(8), 3);
  EXPECT_EQ(floorPow2(1), 1);
  EXPECT_EQ(floorPow2(7), 4);
  EXPECT_EQ(floorPow2(100000), 65536);
  // Parts are contiguous, cover [0, n), and differ in size by at most one.
  for (std::size_t n : {0, 1, 7, 1001})
    for (std::size_t parts : {1, 2, 3, 16}) {
      EXPECT_EQ(blockBegin(n, parts, 0), 0u);
      EXPECT_EQ(blockBegin(n, parts, parts), n);
      for (std::size_t b = 0; b < parts; ++b) {
        const std::size_t len = blockBegin(n, parts, b + 1) - blockBegin(n, parts, b);
        EXPECT_TRUE(len == n / parts || len == n / parts + 1);
      }
    }
}

// Ring reduce-scatter: the partial of each block grows by one distinct contribution per step
// along a chain, is reduced exactly p - 1 times and ends, complete, at its owner.
TEST(Pattern, RingReduceScatter) {
  for (int p : sizes({100, 300})) {
    // partial[i][b]: contributions in rank i's partial of block b (a count; masks for p <= 17).
    std::vector<std::vector<int>> count(p, std::vector<int>(p, 1));
    std::vector<std::vector<std::uint32_t>> mask(p, std::vector<std::uint32_t>(p));
    for (int i = 0; i < p; ++i)
      for (int b = 0; b < p; ++b) mask[i][b] = p <= 17 ? 1u << i : 0;
    std::vector<int> reductions(p, 0);
    for (int s = 0; s < p - 1; ++s) {
      auto next = count;
      auto nextMask = mask;
      for (int i = 0; i < p; ++i) {
        const int to = ringNext(p, i), b = ringReduceScatterSendBlock(p, i, s);
        ASSERT_EQ(ringPrev(p, to), i);
        ASSERT_EQ(ringReduceScatterRecvBlock(p, to, s), b) << "p " << p << " step " << s;
        ASSERT_EQ(count[i][b], s + 1);  // what i computed at the previous step (its input at step 0)
        next[to][b] = count[i][b] + 1;
        if (p <= 17) {
          ASSERT_EQ(mask[i][b] & (1u << to), 0u) << "a contribution reduced twice";
          nextMask[to][b] = mask[i][b] | (1u << to);
        }
        ++reductions[b];
      }
      count = next;
      mask = nextMask;
    }
    for (int b = 0; b < p; ++b) {
      EXPECT_EQ(reductions[b], p - 1);
      EXPECT_EQ(count[b][b], p) << "block " << b << " of " << p << " incomplete at its owner";
      if (p <= 17) {
        EXPECT_EQ(mask[b][b], (1u << p) - 1);
      }
    }
  }
}

// Ring allgather: every block reaches every rank exactly once; a rank forwards only what it has.
TEST(Pattern, RingAllgather) {
  for (int p : sizes({100, 300})) {
    std::vector<std::vector<char>> has(p, std::vector<char>(p, 0));
    for (int i = 0; i < p; ++i) has[i][i] = 1;
    for (int s = 0; s < p - 1; ++s) {
      auto next = has;
      for (int i = 0; i < p; ++i) {
        const int to = ringNext(p, i), b = ringAllgatherSendBlock(p, i, s);
        ASSERT_TRUE(has[i][b]);
        ASSERT_EQ(ringAllgatherRecvBlock(p, to, s), b);
        ASSERT_FALSE(next[to][b]) << "block " << b << " delivered twice";
        next[to][b] = 1;
      }
      has = next;
    }
    for (int i = 0; i < p; ++i)
      for (int b = 0; b < p; ++b) ASSERT_TRUE(has[i][b]);
  }
}

TEST(Pattern, ButterflyFolding) {
  for (int p : sizes({100, 1000, 100000})) {
    const Butterfly bf(p);
    ASSERT_EQ(bf.participants() + bf.extra(), p);
    ASSERT_EQ(1 << bf.steps(), bf.participants());
    ASSERT_LT(bf.extra(), bf.participants());
    std::vector<int> seen(bf.participants(), 0);
    int folded = 0;
    for (int i = 0; i < p; ++i) {
      if (bf.folds(i)) {
        ++folded;
        const int partner = bf.foldPartner(i);
        ASSERT_EQ(bf.foldPartner(partner), i);
        ASSERT_FALSE(bf.folds(partner));
        ASSERT_EQ(bf.virtualRank(i), -1);
        continue;
      }
      const int v = bf.virtualRank(i);
      ASSERT_GE(v, 0);
      ASSERT_LT(v, bf.participants());
      ASSERT_EQ(bf.realRank(v), i);
      ++seen[v];
    }
    EXPECT_EQ(folded, bf.extra());
    for (int n : seen) ASSERT_EQ(n, 1);
  }
}

// Recursive halving: at each step the two peers split what they hold, each keeps the half the
// other sends; afterwards each rank owns a distinct block, the blocks cover the vector, and
// each owned block holds every rank's contribution exactly once. Doubling undoes it.
TEST(Pattern, HalvingDoubling) {
  for (int p : sizes({100, 1000, 4096})) {
    const Butterfly bf(p);
    const int p2 = bf.participants(), L = bf.steps();
    const bool masks = p2 <= 16;
    // partial[v][b]: contributors to v's partial of block b (p2 <= 16).
    std::vector<std::vector<std::uint32_t>> partial(masks ? p2 : 0, std::vector<std::uint32_t>(p2));
    for (int v = 0; v < (masks ? p2 : 0); ++v)
      for (int b = 0; b < p2; ++b) partial[v][b] = 1u << v;
    for (int s = 0; s < L; ++s) {
      auto next = partial;
      for (int v = 0; v < p2; ++v) {
        const int pv = bf.peer(v, s);
        ASSERT_EQ(bf.peer(pv, s), v);
        const BlockRange held = bf.heldBefore(v, s), keep = bf.kept(v, s), sent = bf.sent(v, s);
        ASSERT_EQ(held, bf.heldBefore(pv, s)) << "peers hold the same range before a step";
        ASSERT_EQ(sent, bf.kept(pv, s));
        ASSERT_EQ(keep.size(), held.size() / 2);
        ASSERT_TRUE((keep.begin == held.begin && sent.begin == keep.end && sent.end == held.end) ||
                    (sent.begin == held.begin && keep.begin == sent.end && keep.end == held.end));
        ASSERT_EQ(bf.heldBefore(v, s + 1), keep);
        if (masks)
          for (int b = keep.begin; b < keep.end; ++b) {
            ASSERT_EQ(partial[v][b] & partial[pv][b], 0u) << "a contribution reduced twice";
            next[v][b] = partial[v][b] | partial[pv][b];
          }
      }
      partial = next;
    }
    std::vector<int> owners(p2, 0);
    for (int v = 0; v < p2; ++v) {
      const int b = bf.ownedBlock(v);
      ASSERT_EQ(bf.heldBefore(v, L), (BlockRange{b, b + 1}));
      ++owners[b];
      if (masks) {
        ASSERT_EQ(partial[v][b], (1u << p2) - 1);
      }
    }
    for (int n : owners) ASSERT_EQ(n, 1) << "owned blocks must be distinct and cover the vector";
    // Doubling, steps in reverse: v sends what it holds and receives its peer's range.
    if (p2 <= 1024) {
      std::vector<std::vector<char>> has(p2, std::vector<char>(p2, 0));
      for (int v = 0; v < p2; ++v) has[v][bf.ownedBlock(v)] = 1;
      for (int s = L - 1; s >= 0; --s) {
        auto next = has;
        for (int v = 0; v < p2; ++v) {
          const BlockRange in = bf.sent(v, s);  // = what the peer kept, and now holds
          for (int b = in.begin; b < in.end; ++b) {
            ASSERT_TRUE(has[bf.peer(v, s)][b]);
            ASSERT_FALSE(has[v][b]) << "block delivered twice";
            next[v][b] = 1;
          }
        }
        has = next;
      }
      for (int v = 0; v < p2; ++v)
        for (int b = 0; b < p2; ++b) ASSERT_TRUE(has[v][b]);
    }
  }
}

void checkKnomial(int p, int root, int radix) {
  const KnomialTree t(p, root, radix);
  int levels = 0;
  for (long long reach = 1; reach < p; reach *= radix) ++levels;
  ASSERT_EQ(t.levels(), levels) << "p " << p << " radix " << radix;
  ASSERT_EQ(t.parent(root), -1);
  ASSERT_EQ(t.level(root), levels);
  std::vector<int> asChild(p, 0);
  long long edges = 0;
  for (int i = 0; i < p; ++i) {
    int kids = 0;
    for (int l = 0; l < t.level(i); ++l)
      for (int c = 1; c < radix; ++c) {
        const int ch = t.child(i, l, c);
        if (ch < 0) continue;
        ASSERT_EQ(t.parent(ch), i) << "p " << p << " root " << root << " radix " << radix;
        ASSERT_EQ(t.level(ch), l);
        ++asChild[ch];
        ++kids;
      }
    ASSERT_EQ(t.numChildren(i), kids);
    edges += kids;
    if (i == root) continue;
    // Walking up reaches the root, one level higher each time, within depth(i) <= levels edges.
    int at = i, hops = 0;
    while (at != root) {
      const int up = t.parent(at);
      ASSERT_GE(up, 0);
      ASSERT_GT(t.level(up), t.level(at));
      at = up;
      ASSERT_LE(++hops, levels);
    }
    ASSERT_EQ(hops, t.depth(i));
  }
  ASSERT_EQ(edges, p - 1);
  for (int i = 0; i < p; ++i) ASSERT_EQ(asChild[i], i == root ? 0 : 1) << "every non-root has exactly one parent";
}

// A broadcast by levels, top down: a rank sends only once it has the data, nobody receives
// twice, and all have it after exactly ceil(log_k p) rounds.
void checkKnomialRounds(int p, int root, int radix) {
  const KnomialTree t(p, root, radix);
  std::vector<char> has(p, 0);
  has[root] = 1;
  for (int round = 0; round < t.levels(); ++round) {
    const int level = t.levels() - 1 - round;
    auto next = has;
    for (int i = 0; i < p; ++i) {
      if (level >= t.level(i)) continue;
      for (int c = 1; c < radix; ++c) {
        const int ch = t.child(i, level, c);
        if (ch < 0) break;
        ASSERT_TRUE(has[i]);
        ASSERT_FALSE(next[ch]);
        next[ch] = 1;
      }
    }
    has = next;
  }
  for (int i = 0; i < p; ++i) ASSERT_TRUE(has[i]) << "rank " << i << " of " << p << " not reached";
}

TEST(Pattern, KnomialTree) {
  for (int p = 1; p <= 17; ++p)
    for (int root = 0; root < p; ++root)
      for (int radix = 2; radix <= 4; ++radix) {
        checkKnomial(p, root, radix);
        checkKnomialRounds(p, root, radix);
      }
  for (int p : {100, 1000, 100000})
    for (int root : {0, p / 2 + 1})
      for (int radix : {2, 3, 8}) {
        checkKnomial(p, root, radix);
        checkKnomialRounds(p, root, radix);
      }
  // depth(i) = non-zero digits of the relative rank: for p = radix^m some rank is m deep.
  EXPECT_EQ(KnomialTree(16, 3, 2).depth(2), 4);  // relative rank 15
  EXPECT_EQ(KnomialTree(27, 0, 3).depth(26), 3);
}

// Bruck allgather: a rank sends only blocks it holds, to the rank that expects exactly those,
// and every block reaches every rank exactly once.
TEST(Pattern, BruckAllgather) {
  for (int p : sizes({100, 1000})) {
    std::vector<std::vector<char>> has(p, std::vector<char>(p, 0));
    for (int i = 0; i < p; ++i) has[i][i] = 1;
    for (int k = 0; k < bruckSteps(p); ++k) {
      auto next = has;
      for (int i = 0; i < p; ++i) {
        const BruckAllgatherStep st = bruckAllgatherStep(p, i, k);
        const BruckAllgatherStep peer = bruckAllgatherStep(p, st.sendTo, k);
        ASSERT_EQ(peer.recvFrom, i);
        ASSERT_EQ(peer.firstReceived, st.firstSent);
        ASSERT_EQ(peer.count, st.count);
        for (int j = 0; j < st.count; ++j) {
          const int b = (st.firstSent + j) % p;
          ASSERT_TRUE(has[i][b]);
          ASSERT_FALSE(next[st.sendTo][b]) << "p " << p << ": block " << b << " delivered twice";
          next[st.sendTo][b] = 1;
        }
      }
      has = next;
    }
    for (int i = 0; i < p; ++i)
      for (int b = 0; b < p; ++b) ASSERT_TRUE(has[i][b]) << "p " << p;
  }
}

// Bruck all-to-all: track every (source, destination) block through the steps; each ends once,
// at its destination, at the position the final permutation expects.
TEST(Pattern, BruckAlltoall) {
  for (int p : sizes({100, 600})) {
    struct Block {
      int src, dst;
    };
    std::vector<std::vector<Block>> at(p, std::vector<Block>(p));
    for (int i = 0; i < p; ++i)
      for (int j = 0; j < p; ++j) at[i][j] = {i, bruckAlltoallInitialDest(p, i, j)};
    int most = 0;
    for (int k = 0; k < bruckSteps(p); ++k) {
      auto next = at;
      int moved = 0;
      for (int j = bruckAlltoallFirst(k); j < p; j = bruckAlltoallNext(j, k)) {
        ASSERT_TRUE(j & (1 << k));
        ++moved;
      }
      ASSERT_EQ(moved, bruckAlltoallBlocks(p, k));
      most = std::max(most, moved);
      for (int i = 0; i < p; ++i) {
        const int to = bruckAlltoallSendTo(p, i, k);
        ASSERT_EQ(bruckAlltoallRecvFrom(p, to, k), i);
        for (int j = bruckAlltoallFirst(k); j < p; j = bruckAlltoallNext(j, k)) next[to][j] = at[i][j];
      }
      at = next;
    }
    ASSERT_EQ(most, bruckAlltoallMaxBlocks(p));
    std::vector<char> seen(static_cast<std::size_t>(p) * p, 0);
    for (int i = 0; i < p; ++i)
      for (int j = 0; j < p; ++j) {
        const Block b = at[i][j];
        ASSERT_EQ(b.dst, i) << "p " << p;
        ASSERT_EQ(b.src, bruckAlltoallFinalSource(p, i, j));
        char& s = seen[static_cast<std::size_t>(b.src) * p + b.dst];
        ASSERT_FALSE(s) << "block delivered twice";
        s = 1;
      }
  }
}

// Pairwise exchange: symmetric pairs, and every rank meets every rank (itself once) exactly once.
TEST(Pattern, Pairwise) {
  for (int p : sizes({100, 1000})) {
    std::vector<std::vector<int>> met(p, std::vector<int>(p, 0));
    for (int s = 0; s < pairwiseSteps(p); ++s)
      for (int i = 0; i < p; ++i) {
        const int peer = pairwisePeer(p, i, s);
        ASSERT_EQ(pairwisePeer(p, peer, s), i);
        ++met[i][peer];
      }
    for (int i = 0; i < p; ++i)
      for (int j = 0; j < p; ++j) ASSERT_EQ(met[i][j], 1);
  }
}

// Dissemination: after ceil(log2 p) rounds every rank has heard, directly or not, from all.
TEST(Pattern, Dissemination) {
  for (int p : sizes({100, 1000})) {
    std::vector<std::vector<char>> heard(p, std::vector<char>(p, 0));
    for (int i = 0; i < p; ++i) heard[i][i] = 1;
    for (int k = 0; k < bruckSteps(p); ++k) {
      auto next = heard;
      for (int i = 0; i < p; ++i) {
        const int to = disseminationSendTo(p, i, k);
        ASSERT_EQ(disseminationRecvFrom(p, to, k), i);
        for (int j = 0; j < p; ++j) next[to][j] |= heard[i][j];
      }
      heard = next;
    }
    for (int i = 0; i < p; ++i)
      for (int j = 0; j < p; ++j) ASSERT_TRUE(heard[i][j]) << "p " << p;
  }
}

}  // namespace
}  // namespace tiercc::pattern
