// Symmetric heap of the shm backend (see symmetric_heap.hpp).
#include "scaleup-emu/shm/symmetric_heap.hpp"

#include <unistd.h>

#include "bootstrap/store.hpp"
#include "core/errors.hpp"
#include "core/log.hpp"

namespace tiercc {

SymmetricHeap::SymmetricHeap(std::string segmentPrefix, int localRank, int size)
    : prefix_(std::move(segmentPrefix)), localRank_(localRank), size_(size) {}

SymmetricHeap::~SymmetricHeap() = default;

void* SymmetricHeap::allocate(Store& store, std::size_t bytes, Deadline deadline) {
  // Bad input changes nothing: no id taken, no key written.
  TIERCC_REQUIRE_ARG(bytes > 0, "allocShared: size 0 (ask for at least one byte)");
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  TIERCC_REQUIRE_ARG(bytes <= SIZE_MAX - page, "allocShared: ", bytes, " bytes overflow the address space");
  const std::size_t mapped = (bytes + page - 1) / page * page;

  const std::uint32_t id = nextId_++;
  const std::string key = "sym" + std::to_string(id) + "/";
  auto segName = [&](int r) { return prefix_ + "-s" + std::to_string(id) + "-l" + std::to_string(r); };

  // Sizes first: nothing is created unless every rank asked for the same size.
  store.setString(key + "size/" + std::to_string(localRank_), std::to_string(bytes));
  for (int r = 0; r < size_; ++r) {
    std::string theirs = store.getString(key + "size/" + std::to_string(r), deadline);
    if (theirs != std::to_string(bytes))
      fail(ErrorCode::InvalidArgument, "allocShared: ranks of this domain disagree on the size (local rank ",
           localRank_, " asked for ", bytes, " bytes, local rank ", r, " for ", theirs,
           "): every rank must call allocShared with the same size");
  }

  // Every rank says whether it created its segment, and every rank hears all of them before it
  // opens any: when one could not (/dev/shm full), all fail at once with its reason, and the
  // others' segments go (unlinked) with their Allocation, none of them opened by a peer.
  Allocation a;
  a.bytes = bytes;
  a.segments.resize(size_);
  try {
    a.segments[localRank_] = ShmSegment::create(segName(localRank_), mapped);
  } catch (const Error& e) {
    store.setString(key + "created/" + std::to_string(localRank_), e.what());
    fail(e.code(), "allocShared of ", bytes, " bytes: ", e.what());
  }
  store.setString(key + "created/" + std::to_string(localRank_), "ok");
  for (int r = 0; r < size_; ++r) {
    if (r == localRank_) continue;
    std::string created = store.getString(key + "created/" + std::to_string(r), deadline);
    if (created != "ok")
      fail(ErrorCode::SystemError, "allocShared of ", bytes, " bytes: local rank ", r,
           " could not create its part: ", created);
  }
  for (int r = 0; r < size_; ++r)
    if (r != localRank_) a.segments[r] = ShmSegment::open(segName(r), mapped);
  // As for the windows: once every peer mapped ours, the name goes, so nothing can leak.
  store.setString(key + "mapped/" + std::to_string(localRank_), "1");
  for (int r = 0; r < size_; ++r) store.get(key + "mapped/" + std::to_string(r), deadline);
  a.segments[localRank_].unlink();

  std::byte* base = a.segments[localRank_].data();
  std::lock_guard<std::mutex> lock(mutex_);
  byBase_[reinterpret_cast<std::uintptr_t>(base)] = id;
  byId_.emplace(id, std::move(a));
  live_.store(byId_.size(), std::memory_order_relaxed);
  TIERCC_LOG(Trace, Shm) << "symmetric allocation " << id << ": " << bytes << " bytes at " << base;
  return base;
}

void SymmetricHeap::release(void* p) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = byBase_.find(reinterpret_cast<std::uintptr_t>(p));
  TIERCC_REQUIRE_ARG(it != byBase_.end(), "freeShared: ", p,
                     " is not a pointer returned by allocShared on this communicator (or was freed already);"
                     " nothing was freed");
  byId_.erase(it->second);
  live_.store(byId_.size(), std::memory_order_relaxed);
  byBase_.erase(it);
}

std::optional<SymmetricRef> SymmetricHeap::find(const void* p, std::size_t bytes) const {
  const auto addr = reinterpret_cast<std::uintptr_t>(p);
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = byBase_.upper_bound(addr);
  if (it == byBase_.begin()) return std::nullopt;
  --it;
  const Allocation& a = byId_.at(it->second);
  const std::uintptr_t offset = addr - it->first;
  if (offset > a.bytes || bytes > a.bytes - offset) return std::nullopt;
  return SymmetricRef{it->second, offset};
}

std::byte* SymmetricHeap::peerAddress(int peer, const SymmetricRef& ref) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = byId_.find(ref.id);
  if (it == byId_.end())
    fail(ErrorCode::InvalidArgument, "local rank ", peer, " uses symmetric allocation ", ref.id,
         ", which this rank has freed: free symmetric memory on every rank only after its last use");
  return it->second.segments[peer].data() + ref.offset;
}

// Asked by every collective call: no lock (allocations are collective, made between calls).
std::size_t SymmetricHeap::liveAllocations() const { return live_.load(std::memory_order_relaxed); }

}  // namespace tiercc
