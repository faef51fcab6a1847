// membarrier(2): an asymmetric fence, for a Dekker pair whose one side runs at every call and
// whose other side runs rarely.
//
// Each side stores its own flag and then reads the other's (a signal stores the flag and reads
// whether anyone sleeps on it; a waiter counts itself in and reads the flag again). Each needs
// a store-load fence between the two, or both may read the old value and each miss the other.
// A store-load fence is a locked instruction on x86, tens of cycles when the line is shared. So
// the fence moves to the rare side: membarrier makes every CPU that runs a thread of a
// registered process execute a full barrier before it returns, and the frequent side keeps only
// a compiler barrier (std::atomic_signal_fence). Users: the shm domain's signals
// (scaleup-emu/shm/shm_domain.cpp; the fence was 30% of a rank's cycles in an 8 B broadcast)
// and BiasedMutex (core/biased_mutex.hpp).
#pragma once

namespace tiercc::membarrier {

/// Registers this process for global expedited barriers, once per process (a forked child
/// registers again); true if the kernel offers them (Linux 4.16 and later, unless seccomp
/// forbids the call). Thread-safe. Until it returned true, the frequent side keeps its fence.
bool registerProcess();
/// A full memory barrier on this thread and on every CPU that runs a thread of a registered
/// process. A failure (not expected once registered) is logged once, here.
void fenceEveryRegisteredProcess();

}  // namespace tiercc::membarrier
