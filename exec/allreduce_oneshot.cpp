// Allreduce for small messages, where the number of synchronisations matters more than bytes.
// Every rank stages its input, then reads ALL of its domain's windows and reduces them itself
// (in local-rank order, so every rank of a domain gets the same bits): one wait instead of the
// two of reduce-scatter + allgather. Across domains, every rank exchanges the domain's result
// directly with its rail peers and reduces the D results in domain order, so every rank of every
// domain ends with identical bits. Each rail carries the whole message (k times the bound in
// total): the right trade only for small messages, and the statistics say so.
//
// Back-to-back one-shot rounds alternate between two buffers: the halves of the window, or, for
// inputs up to about 512 B on shared memory, two "fast boxes" in the mailbox. A rank that saw
// every peer's Staged flag of round e-1 knows they have all finished reading round e-2, the last
// round that used the buffer round e writes: it skips beginRound's wait for Released(e-1), one
// cache miss per peer. After any other round, it waits as every round does. A fast box starts
// with its round's epoch: readers poll it and find the input in the same cache lines, instead of
// missing once on the Staged flag and again on the data (Open MPI's fast boxes, two deep).
#include <atomic>
#include <cstring>

#include "exec/round.hpp"
#include "core/cpu_relax.hpp"
#include "core/reduce.hpp"

namespace tiercc {
namespace {

// Fast boxes: each mailbox holds two, for alternating rounds. A box is the round's epoch, then
// the input; the reader polls the epoch and finds the input in the same cache lines.
constexpr std::size_t kFastBoxBytes = Domain::kMailboxBytes / 2;
constexpr std::size_t kFastBoxHeader = 8;
constexpr std::size_t kFastBoxPayload = kFastBoxBytes - kFastBoxHeader;
static_assert(kFastBoxBytes % 64 == 0 && kFastBoxPayload >= 512);
// Polling a fast box is brief: then the wait on the Staged flag takes over (it blocks).
constexpr auto kFastBoxPollTime = std::chrono::microseconds(2);

std::atomic_ref<std::uint32_t> boxEpoch(std::byte* box) {
  return std::atomic_ref<std::uint32_t>(*reinterpret_cast<std::uint32_t*>(box));
}

/// Polls a peer's fast box briefly for round `epoch`; false if its input has not arrived.
bool pollBox(std::byte* box, std::uint32_t epoch) {
  const std::atomic_ref<std::uint32_t> seen = boxEpoch(box);
  auto arrived = [&] {
    for (int i = 0; i < 32; ++i) {
      if (seen.load(std::memory_order_acquire) == epoch) return true;
      cpuRelax();
    }
    return false;
  };
  if (arrived()) return true;  // the common case in a tight loop: no clock read at all
  const auto until = Clock::now() + kFastBoxPollTime;
  do {
    if (arrived()) return true;
  } while (Clock::now() < until);
  return false;
}

}  // namespace

void allreduceOneShot(CollContext& ctx, const void* send, void* recv, std::size_t count, DataType dt, ReduceOp op) {
  const Topology& t = ctx.topo;
  Domain& dom = ctx.domain;
  const std::size_t es = dataTypeSize(dt), bytes = count * es;
  const int k = dom.size(), me = dom.localRank(), numDomains = t.numDomains(), myDomain = t.domain();
  Scratch& s = ctx.scratch;

  const std::size_t half = dom.windowBytes() / 2 / 64 * 64;
  const bool inBox = dom.mailboxCoherent() && bytes <= kFastBoxPayload;
  const bool alternate = inBox || bytes <= half;
  std::uint32_t epoch;
  if (alternate && s.afterOneShot) {
    epoch = ++ctx.epoch;  // the collective's only round: its deadline, set at the call, is fresh
  } else {
    epoch = beginRound(ctx);  // clears afterOneShot and afterMailboxOneShot
  }
  const bool poll = inBox && s.afterMailboxOneShot;
  const std::size_t which = epoch & 1;
  auto input = [&](int p) {
    return inBox ? dom.mailbox(p) + which * kFastBoxBytes + kFastBoxHeader
                 : dom.window(p) + (alternate ? which * half : 0);
  };
  if (inBox) {
    std::byte* box = dom.mailbox(me) + which * kFastBoxBytes;
    // The other box may hold anything after another algorithm: an epoch that is not the next.
    if (!poll) boxEpoch(dom.mailbox(me) + (1 - which) * kFastBoxBytes).store(epoch, std::memory_order_relaxed);
    std::memcpy(box + kFastBoxHeader, send, bytes);
    boxEpoch(box).store(epoch, std::memory_order_release);
  } else {
    std::memcpy(input(me), send, bytes);
  }
  // Staged is raised before any wait that blocks (the peer may be blocked on this rank); a
  // polling round raises it after its polls, so that the flag's fence overlaps them.
  bool staged = false;
  auto raiseStaged = [&] {
    if (!staged) dom.signal(kFlagStaged, epoch);
    staged = true;
  };
  if (!poll) raiseStaged();
  for (int p = 0; p < k; ++p) {
    if (p == me || (poll && pollBox(input(p) - kFastBoxHeader, epoch))) continue;
    raiseStaged();
    waitPeer(ctx, p, kFlagStaged, epoch);
  }
  raiseStaged();
  // Domain results of every domain, in domain order: ours is computed here, the others arrive.
  // With one domain ours is the result: reduced straight into the output (the inputs are in
  // the windows or boxes, so an in-place call reads nothing it overwrites).
  std::byte* results = s.receive.data();
  std::byte* out = static_cast<std::byte*>(recv);
  std::byte* ours = numDomains > 1 ? results + myDomain * bytes : out;
  if (k == 1) std::memcpy(ours, input(0), bytes);
  else reduce3(ours, input(0), input(1), count, dt, op);
  for (int p = 2; p < k; ++p) reduceInto(ours, input(p), count, dt, op);
  ctx.movedUp((k - 1) * bytes);
  endRound(ctx, epoch);  // our window may be overwritten from here on; we hold the domain result
  s.afterOneShot = alternate;
  s.afterMailboxOneShot = inBox;

  if (numDomains > 1) {
    TransferBatch batch(ctx);
    for (int d = 0; d < numDomains; ++d) {
      if (d == myDomain) continue;
      batch.send(t.rankAt(d, me), roundTag(ctx, 0, 0), ours, bytes);
      batch.recv(t.rankAt(d, me), roundTag(ctx, 0, 0), results + d * bytes, bytes);
    }
    batch.wait();
    reduce3(out, results, results + bytes, count, dt, op);
    for (int d = 2; d < numDomains; ++d) reduceInto(out, results + d * bytes, count, dt, op);
  }
  if (op == ReduceOp::Avg) finishAvg(out, count, dt, t.size());
  const double domainBound = 2.0 * (numDomains - 1) / numDomains * static_cast<double>(bytes);
  ctx.stats.scaleOutBoundBytes += static_cast<std::uint64_t>(domainBound / t.domainSize());
}

}  // namespace tiercc
