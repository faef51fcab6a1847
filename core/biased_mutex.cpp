// BiasedMutex (see biased_mutex.hpp).
#include "core/biased_mutex.hpp"

#include <sched.h>

#include "core/membarrier.hpp"

namespace tiercc {

BiasedMutex::BiasedMutex() : biased_(membarrier::registerProcess()) {}

void BiasedMutex::lockBiased() {
  if (biased_) {
    inside_.store(true, std::memory_order_relaxed);
    std::atomic_signal_fence(std::memory_order_seq_cst);  // the CPU's order comes from lock()'s membarrier
    if (!held_.load(std::memory_order_acquire)) return;   // acquire: what the last holder wrote
    inside_.store(false, std::memory_order_release);
  }
  mutex_.lock();
  biasedTookMutex_ = true;
}

void BiasedMutex::unlockBiased() {
  if (biasedTookMutex_) {
    biasedTookMutex_ = false;
    mutex_.unlock();
    return;
  }
  inside_.store(false, std::memory_order_release);  // release: what the section wrote
}

void BiasedMutex::lock() {
  mutex_.lock();
  if (!biased_) return;
  held_.store(true, std::memory_order_relaxed);
  membarrier::fenceEveryRegisteredProcess();
  while (inside_.load(std::memory_order_acquire)) sched_yield();  // a section of a few counters
}

void BiasedMutex::unlock() {
  if (biased_) held_.store(false, std::memory_order_release);
  mutex_.unlock();
}

}  // namespace tiercc
