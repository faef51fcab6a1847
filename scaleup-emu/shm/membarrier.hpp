// membarrier(2) for the asymmetric fence between a rank that signals and a rank about to sleep.
//
// A signal stores the flag and then reads whether anyone sleeps on it; a waiter counts itself
// in and then reads the flag again before it sleeps (Dekker). Each side needs a store-load
// fence, or both may read the old value: the signaller misses the sleeper and the sleeper
// misses the signal. Signals are on the hot path of every small collective, sleeps are not (a
// waiter spins and yields first), so the fence moves to the sleeper: membarrier makes every CPU
// that runs a registered process execute a full barrier before it returns, and the signal
// keeps only a compiler barrier. On a 2-rank 8 B broadcast the signal's fence took 30% of a
// rank's cycles (perf; docs/performance.md).
#pragma once

namespace tiercc::membarrier {

/// Registers this process for global expedited barriers, once; true if the kernel offers them
/// (Linux 4.16 and later, unless seccomp forbids the call). Thread-safe; later calls return the
/// first answer.
bool registerProcess();
/// A full memory barrier on every CPU that runs a thread of a registered process, this one
/// included; false if the call failed (then nothing is known of the others' order).
bool fenceEveryRegisteredProcess();

}  // namespace tiercc::membarrier
