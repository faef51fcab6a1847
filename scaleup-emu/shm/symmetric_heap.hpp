// The shm backend's symmetric heap: one POSIX shared-memory segment per rank and allocation,
// mapped by every peer of the domain and unlinked as soon as all of them have it, so nothing
// is left in /dev/shm even after a crash. Allocation ids are counted per heap, so they agree
// across ranks that allocate collectively.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "tiercc/deadline.hpp"
#include "scaleup-emu/shm/shm_segment.hpp"
#include "scaleup-emu/symmetric_memory.hpp"

namespace tiercc {

class Store;

class SymmetricHeap final : public SymmetricMemory {
 public:
  /// `segmentPrefix` is unique per job, communicator and domain.
  SymmetricHeap(std::string segmentPrefix, int localRank, int size);
  ~SymmetricHeap() override;

  /// Collective over the domain (see Domain::allocateSymmetric).
  void* allocate(Store& store, std::size_t bytes, Deadline deadline);
  /// See Domain::freeSymmetric.
  void release(void* p);

  std::optional<SymmetricRef> find(const void* p, std::size_t bytes) const override;
  std::byte* peerAddress(int peer, const SymmetricRef& ref) const override;
  std::size_t liveAllocations() const override;

 private:
  struct Allocation {
    std::size_t bytes = 0;
    std::vector<ShmSegment> segments;  // index = local rank; ours is segments[localRank_]
  };

  std::string prefix_;
  int localRank_, size_;
  std::uint32_t nextId_ = 0;
  mutable std::mutex mutex_;  // collectives on the async worker look up while the user allocates
  std::map<std::uint32_t, Allocation> byId_;
  std::atomic<std::size_t> live_{0};                // byId_.size(), readable without the lock
  std::map<std::uintptr_t, std::uint32_t> byBase_;  // our mapping's start -> id
};

}  // namespace tiercc
