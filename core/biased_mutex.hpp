// BiasedMutex: a mutex whose one frequent user locks and unlocks it with plain stores.
//
// The communicator's statistics are updated by every call and read now and then (a metrics
// scrape, stats(), a failure). An uncontended std::mutex costs two atomic read-modify-writes
// per call, 11% of a one-rank 8 B broadcast (0.123 -> 0.110 us without it). Here the frequent
// side (lockBiased, one thread at a time: the caller makes sure of it) marks itself inside and
// then checks that no other side holds the mutex, with only a compiler barrier between; any
// other side (lock) takes the real mutex, marks that it holds it, fences every thread with
// membarrier (core/membarrier.hpp) and waits for the frequent side to be outside. Either the
// frequent side sees the mark and queues on the real mutex, or the other side sees it inside
// and waits: a Dekker pair with the fence on the rare side. Where membarrier is not offered,
// both sides take the real mutex.
#pragma once

#include <atomic>
#include <mutex>

namespace tiercc {

class BiasedMutex {
 public:
  BiasedMutex();
  BiasedMutex(const BiasedMutex&) = delete;
  BiasedMutex& operator=(const BiasedMutex&) = delete;

  /// The frequent side: one thread at a time (e.g. under the communicator's exec gate).
  void lockBiased();
  void unlockBiased();
  /// Any thread (BasicLockable, for std::lock_guard).
  void lock();
  void unlock();

  /// Scoped lockBiased/unlockBiased.
  class BiasedGuard {
   public:
    explicit BiasedGuard(BiasedMutex& m) : m_(m) { m_.lockBiased(); }
    ~BiasedGuard() { m_.unlockBiased(); }
    BiasedGuard(const BiasedGuard&) = delete;
    BiasedGuard& operator=(const BiasedGuard&) = delete;

   private:
    BiasedMutex& m_;
  };

 private:
  std::mutex mutex_;
  const bool biased_;                // membarrier registered: the frequent side skips the mutex
  std::atomic<bool> inside_{false};  // the frequent side is in its critical section
  std::atomic<bool> held_{false};    // another side holds mutex_
  bool biasedTookMutex_ = false;     // the frequent side's last lock fell back to mutex_
};

}  // namespace tiercc
