// A cache hint for a line another core owns: fetched ahead of its use, so that the miss overlaps
// other work instead of stalling it.
#pragma once

namespace tiercc {

/// Asks for the cache line at `p` in a state this core may write (x86's prefetchw). A store to a
/// line a peer core holds must first take it from that core; stores commit in order, so every
/// later store waits behind that miss once the store buffer fills, and a few dozen stores of
/// bookkeeping do fill it. Prefetched a call ahead, the line is here when the store comes.
inline void prefetchForWrite(const void* p) {
#if defined(__x86_64__)
  // An instruction of its own rather than __builtin_prefetch(p, 1): gcc emits prefetchw only
  // with -mprfchw, and the build targets baseline x86-64 (where it executes as a no-op if absent).
  asm volatile("prefetchw %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p, 1);
#endif
}

}  // namespace tiercc
