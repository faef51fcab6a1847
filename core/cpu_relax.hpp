// The pause hint for spin loops: tells the core (and its hyperthread sibling) that this thread is
// waiting, which saves power and frees pipeline resources for the thread being waited for.
#pragma once

namespace tiercc {

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace tiercc
