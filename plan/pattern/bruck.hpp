// Bruck pattern math: ceil(log2 p) steps at peer distance 2^k, for allgather, all-to-all and
// the dissemination barrier (the same shifts with empty messages). O(1) per query, except
// bruckAlltoallMaxBlocks (O(log p)); positions are walked with bruckAlltoallNext, no lists.
//
// Allgather: before step k rank i holds blocks i .. i + 2^k - 1 (mod p); it sends the first
// min(2^k, p - 2^k) of them to i - 2^k and receives as many from i + 2^k, which it stores as
// blocks i + 2^k onwards. Blocks keep their global index, so no final rotation is needed.
//
// All-to-all: rank i first arranges its blocks by position j = destination - i (mod p). At
// step k it sends every position j with bit k set to i + 2^k and receives the same positions
// from i - 2^k. A block thus moves by j = destination - source in total; at the end position j
// holds the block from rank i - j. Each step moves about p/2 blocks: log p messages instead of
// p - 1, for p/2 log p blocks instead of p - 1 (small messages only).
#pragma once

#include <algorithm>

#include "plan/pattern/pattern.hpp"

namespace tiercc::pattern {

/// Steps of Bruck's allgather and all-to-all, and rounds of the dissemination barrier.
inline int bruckSteps(int p) { return ceilLog2(p); }

struct BruckAllgatherStep {
  int sendTo = 0;         ///< i - 2^k
  int recvFrom = 0;       ///< i + 2^k
  int firstSent = 0;      ///< blocks firstSent .. firstSent + count - 1 (mod p) go out
  int firstReceived = 0;  ///< blocks firstReceived .. + count - 1 (mod p) come in
  int count = 0;          ///< min(2^k, p - 2^k)
};
inline BruckAllgatherStep bruckAllgatherStep(int p, int i, int step) {
  const long long d = 1LL << step;
  return {.sendTo = wrap(i - d, p),
          .recvFrom = wrap(i + d, p),
          .firstSent = i,
          .firstReceived = wrap(i + d, p),
          .count = static_cast<int>(std::min<long long>(d, p - d))};
}

/// All-to-all step k: rank i sends to i + 2^k and receives from i - 2^k.
inline int bruckAlltoallSendTo(int p, int i, int step) { return wrap(static_cast<long long>(i) + (1LL << step), p); }
inline int bruckAlltoallRecvFrom(int p, int i, int step) { return wrap(static_cast<long long>(i) - (1LL << step), p); }
/// Positions that move at step k: those in [0, p) with bit k set.
inline int bruckAlltoallBlocks(int p, int step) {
  // In every period of 2^(k+1) positions the upper 2^k have bit k set.
  const long long d = 1LL << step, period = 2 * d;
  return static_cast<int>(p / period * d + std::max<long long>(0, p % period - d));
}
/// The largest bruckAlltoallBlocks over all steps (what one step's scratch must hold).
inline int bruckAlltoallMaxBlocks(int p) {
  int most = 0;
  for (int k = 0; k < bruckSteps(p); ++k) most = std::max(most, bruckAlltoallBlocks(p, k));
  return most;
}
/// First position that moves at step k (2^k; >= p means none), and the next after j.
inline int bruckAlltoallFirst(int step) { return 1 << step; }
inline int bruckAlltoallNext(int j, int step) { return (j + 1) | (1 << step); }
/// Destination of the block rank i holds at position j before the steps: i + j.
inline int bruckAlltoallInitialDest(int p, int i, int j) { return wrap(static_cast<long long>(i) + j, p); }
/// Source of the block rank i holds at position j after the steps: i - j.
inline int bruckAlltoallFinalSource(int p, int i, int j) { return wrap(static_cast<long long>(i) - j, p); }

/// Dissemination barrier, round k: rank i signals i + 2^k and waits for i - 2^k.
inline int disseminationSendTo(int p, int i, int round) { return bruckAlltoallSendTo(p, i, round); }
inline int disseminationRecvFrom(int p, int i, int round) { return bruckAlltoallRecvFrom(p, i, round); }

}  // namespace tiercc::pattern
