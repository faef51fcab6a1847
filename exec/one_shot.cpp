// The one-shot step (see plan/algorithms/one_shot.cpp): every rank stages its input and takes
// ALL of its domain's inputs itself: an allreduce reduces them in local-rank order, so that every
// rank of a domain gets the same bits (one wait instead of the two of reduce-scatter and
// allgather); an allgather or all-to-all copies its blocks of them, a reduce-scatter reduces its
// block of them. A broadcast's or a reduce's ranks take only what their role needs
// (rootedRound). The step runs its own round of the domain's flags.
//
// Back-to-back one-shot rounds rotate through buffers: the two halves of the window, or, for
// inputs up to 568 B on shared memory, the "fast boxes" in the mailbox. A rank that saw
// every peer's Staged flag of round e-1 knows they have all finished reading round e-2, which is
// at least as old as the last round that used the buffer round e writes: it skips waiting for
// Released(e-1), one cache miss per peer. After any other round, it waits as every round does. A
// fast box starts with its round's epoch: readers poll it and find the input in the same cache
// lines, instead of missing once on the Staged flag and again on the data (Open MPI's fast
// boxes). A broadcast's root (a reduce's writers) waits for nobody until it would overwrite a box
// that a reader may not have read yet: it runs up to one call fewer ahead than the mailbox has
// slots, as MPI's eager messages let it, and its readers find their boxes full instead of waiting
// a round trip per call.
#include <atomic>
#include <bit>

#include "core/copy.hpp"
#include "core/cpu_relax.hpp"
#include "core/prefetch.hpp"
#include "core/reduce.hpp"
#include "exec/call_stamp.hpp"
#include "exec/steps.hpp"

namespace tiercc::steps {
namespace {

// Fast boxes: slots of the mailbox used in turn, round e in slot e % n. A slot is the round's
// epoch and the writer's call fingerprint (8 bytes), then the input, in the smallest of 16, 32,
// 64, 128, 256 or 576 bytes that holds it: a mailbox of 4608 bytes uses 256, 128, 64, 32, 16 or
// 8 of them (a power of two, below). Small inputs share cache lines (four 8-byte inputs to a line), so that a reader
// behind its writer takes several rounds' inputs with one miss, as Open MPI's fast boxes pack small messages; the more
// slots, the further a broadcast's root may run ahead. Only rounds whose writers run ahead share lines (broadcast and
// reduce): where every rank waits for every other each round, a peer still reading round e's slot would lose its line
// to the writer of round e + 1 next to it, so those rounds' slots are 64 bytes at least.
constexpr std::size_t kFastBoxHeader = 8;
constexpr std::size_t kSlotBytes[] = {16, 32, 64, 128, 256, 576};
constexpr std::size_t kFastBoxPayload = 576 - kFastBoxHeader;
static_assert(Domain::kMailboxBytes % 576 == 0 && kFastBoxPayload >= 512);
/// The slot size for `inputBytes` of input, at least `least`; 0 when it does not fit a slot.
constexpr std::size_t slotBytesFor(std::size_t inputBytes, std::size_t least) {
  for (std::size_t bytes : kSlotBytes)
    if (bytes >= least && inputBytes + kFastBoxHeader <= bytes) return bytes;
  return 0;
}
// The window's halves: rounds alternate between them.
constexpr std::uint32_t kWindowHalves = 2;
// Polling a fast box is brief: then the wait on the Staged flag takes over (it blocks).
constexpr auto kFastBoxPollTime = std::chrono::microseconds(2);

std::atomic_ref<std::uint32_t> boxEpoch(std::byte* box) {
  return std::atomic_ref<std::uint32_t>(*reinterpret_cast<std::uint32_t*>(box));
}

// The box header's other word: the writer's call fingerprint (ExecContext::tagSalt), in the
// cache line the reader polls anyway, so that comparing calls costs no extra miss.
std::atomic_ref<std::uint32_t> boxPrint(std::byte* box) {
  return std::atomic_ref<std::uint32_t>(*reinterpret_cast<std::uint32_t*>(box + 4));
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

// Where one-shot rounds stage `inputBytes` per rank: a fast box where the domain's mailboxes are
// coherent and it fits, else the window, alternating between its halves where the input fits one
// (an alternating round may skip waiting for Released, see above). Round e uses slot e % n or
// half e % 2.
struct Staging {
  /// `rooted`: a broadcast's or reduce's round, whose small inputs share cache lines.
  Staging(Domain& d, std::size_t inputBytes, bool rooted)
      : dom(d),
        half(d.windowBytes() / 2 / 64 * 64),
        slot(d.mailboxCoherent() ? slotBytesFor(inputBytes, rooted ? 0 : 64) : 0),
        // A power of two, which 2^32 is a multiple of: round e's slot follows round e - 1's even
        // where the epoch wraps, so a slot is never reused sooner than `slots` rounds later.
        slots(slot ? static_cast<std::uint32_t>(std::bit_floor(Domain::kMailboxBytes / slot)) : 0),
        inBox(slot != 0),
        alternate(inBox || inputBytes <= half) {}
  /// Rank p's fast box of round `epoch`.
  std::byte* box(int p, std::uint32_t epoch) const { return dom.mailbox(p) + (epoch % slots) * slot; }
  /// How many rounds use the other buffers before round e's is used again (when `alternate`).
  std::uint32_t rotation() const { return inBox ? slots : kWindowHalves; }
  /// Writes the epoch before `epoch` into every slot of this rank's mailbox, in this round's
  /// layout: whatever the mailbox held, no slot then holds this or a later round's epoch.
  void resetSlots(int me, std::uint32_t epoch) const {
    for (std::uint32_t b = 0; b < slots; ++b) boxEpoch(box(me, b)).store(epoch - 1, std::memory_order_relaxed);
  }
  /// Where rank p's input of round `epoch` is.
  std::byte* input(int p, std::uint32_t epoch) const {
    return inBox ? box(p, epoch) + kFastBoxHeader : dom.window(p) + (alternate ? (epoch % kWindowHalves) * half : 0);
  }
  /// Asks for the lines of this rank's next box that a round of `inputBytes` will write, to
  /// write (core/prefetch.hpp): readers took them rounds back.
  void prefetchNext(int me, std::uint32_t epoch, std::size_t inputBytes) const {
    if (!inBox) return;
    const std::byte* next = box(me, epoch + 1);
    for (std::size_t line = 0; line < kFastBoxHeader + inputBytes; line += 64) prefetchForWrite(next + line);
  }
  /// Polls peer p's box when `poll` (a fast-box round of this slot size ran since beginRound, so
  /// every slot's epoch word is valid): true if its input of round `epoch` is there. Another call fingerprint in the
  /// box (ordered before its epoch) makes comparePeerCall say how the calls differ.
  bool polled(ExecContext& ctx, int p, std::uint32_t epoch, bool poll) const {
    if (!poll || !pollBox(box(p, epoch), epoch)) return false;
    if (boxPrint(box(p, epoch)).load(std::memory_order_relaxed) != ctx.tagSalt) comparePeerCall(ctx, p);
    return true;
  }

  Domain& dom;
  std::size_t half = 0;
  std::size_t slot = 0;     // bytes of a fast box, 0: the input does not go in one
  std::uint32_t slots = 0;  // fast boxes in a mailbox
  bool inBox = false, alternate = false;
};

// A one-shot round may skip beginRound only this many times in a row: see
// Scratch::roundsSinceBegin.
constexpr std::uint32_t kMaxRoundsWithoutBegin = std::uint32_t(1) << 30;

/// Starts a one-shot round on `at`: without beginRound's wait for Released where `afterAlike`
/// (the round before let this kind of round skip it) and nothing else forbids it, else with it.
/// What forbids it: buffers that do not alternate; a fast-box slot of another size than the
/// mailbox's since beginRound (a peer may still read an input of the old layout where the new
/// one puts other slots); and kMaxRoundsWithoutBegin skipped rounds in a row.
std::uint32_t beginOneShotRound(ExecContext& ctx, const Staging& at, bool afterAlike) {
  Scratch& s = ctx.scratch;
  const bool relayout = at.inBox && s.mailboxSlot != 0 && s.mailboxSlot != at.slot;
  if (!afterAlike || !at.alternate || relayout || s.roundsSinceBegin >= kMaxRoundsWithoutBegin) return beginRound(ctx);
  ++s.roundsSinceBegin;
  return ++ctx.epoch;
}

// Allreduce: the domain's inputs reduced, in local-rank order (every rank gets the same bits).
template <class Input>
void reduceDomain(Call& c, const Step& st, Fragment& f, Input input) {
  ExecContext& ctx = c.ctx;
  const std::size_t bytes = f.count * c.es;
  // With one domain the domain's result is the result: reduced straight into the output (the
  // inputs are in the windows or boxes, so an in-place call reads nothing it overwrites).
  std::byte* ours = st.out == Buffer::Recv ? c.recv() : c.receive(f) + ctx.topo.domain() * bytes;
  if (c.k == 1)
    copyBytes(ours, input(0), bytes);
  else
    reduce3(ours, input(0), input(1), f.count, c.args.dt, c.args.op);
  for (int p = 2; p < c.k; ++p) reduceInto(ours, input(p), f.count, c.args.dt, c.args.op);
  ctx.movedUp((c.k - 1) * bytes);
  c.finishAvg(st, ours, f.count);
}

// Allgather: every peer's block to its place; all-to-all: this rank's block of every peer's
// input. This rank's own block comes from its send buffer (nothing to do in place).
template <class Input>
void copyBlocks(Call& c, Input input) {
  const Topology& t = c.ctx.topo;
  const std::size_t bytes = c.plan.count * c.es;
  const std::size_t mine = c.plan.coll == Collective::AllToAll ? std::size_t(t.rank()) * bytes : 0;
  for (int p = 0; p < c.k; ++p) {
    const std::size_t rank = static_cast<std::size_t>(t.rankAt(t.domain(), p));
    const std::byte* from = (p == c.me ? c.send() : input(p)) + mine;
    std::byte* to = c.recv() + rank * bytes;
    if (from != to) copyBytes(to, from, bytes);
  }
  c.ctx.movedUp((c.k - 1) * bytes);
}

// Reduce-scatter: this rank's block of every input in the domain (one domain: all of them),
// reduced in local-rank order. An in-place output aliases this rank's block of its send buffer,
// which is read from its staged copy.
template <class Input>
void reduceOwnBlock(Call& c, const Step& st, Fragment& f, Input input) {
  const std::size_t bytes = f.count * c.es, mine = std::size_t(c.ctx.topo.rank()) * bytes;
  std::byte* out = c.recv();
  if (c.k == 1)
    copyBytes(out, input(0) + mine, bytes);
  else
    reduce3(out, input(0) + mine, input(1) + mine, f.count, c.args.dt, c.args.op);
  for (int p = 2; p < c.k; ++p) reduceInto(out, input(p) + mine, f.count, c.args.dt, c.args.op);
  c.ctx.movedUp((c.k - 1) * bytes);
  c.finishAvg(st, out, f.count);
}

// Broadcast and reduce: the writers (a broadcast's root; a reduce's other ranks) stage their
// input, the readers take it (a broadcast's peers copy the root's; a reduce's root reduces them
// all), and nobody else waits on anybody. A reader raises Staged first, which says it has left
// the round before; a writer raises its own once its input is there. Before it overwrites the
// buffer of round e - n (n: the mailbox's slots, or the window's 2 halves), a writer needs every
// peer to have finished that round: unless it knows so already, it waits for every peer's Staged
// of round e - n / 2, which tells it for the next n / 2 rounds too. So a writer runs up to n - 1
// calls ahead of its readers, and a reader waits only for the data.
void rootedRound(Call& c, const Step& st, Fragment& f) {
  ExecContext& ctx = c.ctx;
  Domain& dom = ctx.domain;
  Scratch& s = ctx.scratch;
  const bool broadcast = c.plan.coll == Collective::Broadcast, isRoot = c.me == c.rootLocal;
  const bool writes = broadcast == isRoot;
  const std::size_t bytes = f.count * c.es;
  const Staging at(dom, bytes, true);
  const std::uint32_t epoch = beginOneShotRound(ctx, at, s.afterOneShot || s.afterRootedOneShot);
  f.epoch = epoch;
  // The first fast-box round since beginRound: the mailbox may hold any bytes, so every rank
  // writes the round before's epoch into all of its slots, and none holds this or a later round's
  // epoch by chance. From then on the slots are polled, so this round ends with every rank having
  // seen every peer's Staged, raised after its reset (below): no peer polls a slot not yet reset.
  const bool poll = at.inBox && s.mailboxSlot == at.slot;
  const bool reset = at.inBox && !poll;
  if (reset) at.resetSlots(c.me, epoch);
  if (writes) {
    const std::uint32_t n = at.rotation();
    if (!peersFinished(s, epoch - n)) {            // has every peer read the buffer's last round?
      const std::uint32_t staged = epoch - n / 2;  // a peer that raised it finished epoch - n / 2 - 1
      for (int p = 0; p < c.k; ++p) waitPeer(ctx, p, kFlagStaged, staged, false);
      learnPeersFinishedBefore(s, staged);
    }
    copyBytes(at.input(c.me, epoch), c.send(), bytes);
    if (at.inBox) {
      boxPrint(at.box(c.me, epoch)).store(ctx.tagSalt, std::memory_order_relaxed);
      boxEpoch(at.box(c.me, epoch)).store(epoch, std::memory_order_release);
    }
    dom.signal(kFlagStaged, epoch);
    if (broadcast && c.send() != c.recv()) copyBytes(c.recv(), c.send(), bytes);
    // The next round's box: its reader may hold the lines from rounds back.
    at.prefetchNext(c.me, epoch, bytes);
  } else {
    dom.signal(kFlagStaged, epoch);
    auto arrived = [&](int p) {  // the writer's input is there
      if (!at.polled(ctx, p, epoch, poll)) waitPeer(ctx, p, kFlagStaged, epoch);
    };
    if (broadcast) {
      arrived(c.rootLocal);
      copyBytes(c.recv(), at.input(c.rootLocal, epoch), bytes);
      ctx.movedUp(bytes);
    } else {
      // This rank's input first (the output may alias it), then the others from the next rank on.
      for (int i = 1; i < c.k; ++i) arrived((c.me + i) % c.k);
      learnPeersFinishedBefore(s, epoch);
      std::byte* out = c.recv();
      if (c.k == 1) {
        if (out != c.send()) copyBytes(out, c.send(), bytes);
      } else {
        reduce3(out, c.send(), at.input((c.me + 1) % c.k, epoch), f.count, c.args.dt, c.args.op);
      }
      for (int i = 2; i < c.k; ++i) reduceInto(out, at.input((c.me + i) % c.k, epoch), f.count, c.args.dt, c.args.op);
      ctx.movedUp((c.k - 1) * bytes);
      c.finishAvg(st, out, f.count);
    }
  }
  if (reset) {  // every rank raised Staged without waiting for this: no rank waits in a circle
    for (int p = 0; p < c.k; ++p) waitPeer(ctx, p, kFlagStaged, epoch, false);
    learnPeersFinishedBefore(s, epoch);
  }
  endRound(ctx, epoch);
  // A one-shot round of every rank next waits for Released: this one's ranks did not all see
  // each other's Staged.
  s.afterOneShot = false;
  s.afterRootedOneShot = at.alternate;
  if (at.inBox) s.mailboxSlot = at.slot;
}

}  // namespace

void oneShot(Call& c, const Step& st, Fragment& f) {
  if (c.plan.coll == Collective::Broadcast || c.plan.coll == Collective::Reduce) return rootedRound(c, st, f);
  ExecContext& ctx = c.ctx;
  Domain& dom = ctx.domain;
  Scratch& s = ctx.scratch;
  const Collective coll = c.plan.coll;
  // Allreduce and allgather stage their vector or block, all-to-all and reduce-scatter a block
  // for every rank.
  const std::size_t bytes = f.count * c.es;
  const bool allBlocks = coll == Collective::AllToAll || coll == Collective::ReduceScatter;
  const std::size_t inputBytes = allBlocks ? bytes * ctx.topo.size() : bytes;
  // The call's only round: its deadline, set at the call, is fresh.
  // After a broadcast or reduce round, whose ranks did not all wait on each other, the round
  // waits for Released as after any other.
  const Staging at(dom, inputBytes, false);
  const std::uint32_t epoch = beginOneShotRound(ctx, at, s.afterOneShot);
  f.epoch = epoch;
  const bool poll = at.inBox && s.mailboxSlot == at.slot;  // as in rootedRound
  auto input = [&](int p) { return at.input(p, epoch); };
  if (at.inBox) {
    std::byte* box = at.box(c.me, epoch);
    if (!poll) at.resetSlots(c.me, epoch);
    copyBytes(box + kFastBoxHeader, c.send(), inputBytes);
    boxPrint(box).store(ctx.tagSalt, std::memory_order_relaxed);
    boxEpoch(box).store(epoch, std::memory_order_release);
  } else {
    copyBytes(input(c.me), c.send(), inputBytes);
  }
  // Staged is raised before any wait that blocks (the peer may be blocked on this rank); a
  // polling round raises it after its polls, so that they do not wait behind the flag's store
  // (and its fence, where shm signals are fenced: TIERCC_SHM_SIGNAL).
  bool staged = false;
  auto raiseStaged = [&] {
    if (!staged) dom.signal(kFlagStaged, epoch);
    staged = true;
  };
  if (!poll) raiseStaged();
  for (int p = 0; p < c.k; ++p) {
    if (p == c.me || at.polled(ctx, p, epoch, poll)) continue;
    raiseStaged();
    waitPeer(ctx, p, kFlagStaged, epoch);
  }
  raiseStaged();
  learnPeersFinishedBefore(s, epoch);  // every peer staged this round: it left the one before
  if (coll == Collective::AllGather || coll == Collective::AllToAll)
    copyBlocks(c, input);
  else if (coll == Collective::ReduceScatter)
    reduceOwnBlock(c, st, f, input);
  else
    reduceDomain(c, st, f, input);
  endRound(ctx, epoch);  // our window may be overwritten from here on; we hold what we need of it
  at.prefetchNext(c.me, epoch, inputBytes);
  s.afterOneShot = at.alternate;
  s.afterRootedOneShot = false;
  if (at.inBox) s.mailboxSlot = at.slot;
}

}  // namespace tiercc::steps
