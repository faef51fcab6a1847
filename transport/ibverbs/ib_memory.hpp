// Registered memory for the ibverbs transport: the MemoryRegion a peer writes into (pinned by
// ibv_reg_mr, described by addr/len/rkey) and the bounded LRU cache behind registerMemory, since
// registering is slow (it pins every page) and callers register the same buffers repeatedly.
#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>

#include "transport/ibverbs/ib_queue_pair.hpp"
#include "transport/transport.hpp"

namespace tiercc::ib {

/// A registration. The MR is deregistered when the last holder (cache, caller, operation) lets go.
class IbRegion final : public MemoryRegion {
 public:
  IbRegion(MrPtr mr, std::byte* data, std::size_t size) : mr_(std::move(mr)), data_(data), size_(size) {}
  std::byte* data() const override { return data_; }
  std::size_t size() const override { return size_; }
  Bytes descriptor() const override;
  std::uint32_t lkey() const { return mr_ ? mr_->lkey : 0; }
  std::uint32_t rkey() const { return mr_ ? mr_->rkey : 0; }
  bool contains(const void* p, std::size_t len) const;

 private:
  MrPtr mr_;  // null for an empty region: nothing to pin
  std::byte* data_;
  std::size_t size_;
};

/// The peer's side of a descriptor.
struct RemoteRegion {
  std::uint64_t addr = 0;
  std::uint64_t len = 0;
  std::uint32_t rkey = 0;
  /// False unless `d` is an IbRegion descriptor.
  static bool parse(const Bytes& d, RemoteRegion& out);
};

/// Registers [buf, buf + len) for local and remote writes; not cached (one operation's buffer).
std::shared_ptr<IbRegion> registerRegion(ibv_pd* pd, void* buf, std::size_t len);

/// A bounded cache of registrations, least recently used evicted first. Thread-safe.
class RegistrationCache {
 public:
  RegistrationCache(ibv_pd* pd, std::size_t maxEntries) : pd_(pd), maxEntries_(maxEntries) {}
  /// The cached registration covering the range (a hit), else a new one that is cached.
  std::shared_ptr<IbRegion> acquire(void* buf, std::size_t len);
  /// The cached registration covering the range, or null; never registers.
  std::shared_ptr<IbRegion> lookup(const void* buf, std::size_t len);
  /// Drops every entry overlapping the range (the memory is about to be freed).
  void invalidate(const void* buf, std::size_t len);
  void clear();

  struct Counters {
    std::size_t hits = 0, misses = 0, evictions = 0, entries = 0;
  };
  Counters counters();

 private:
  std::shared_ptr<IbRegion> findLocked(const void* buf, std::size_t len);

  ibv_pd* pd_;
  std::size_t maxEntries_;
  std::mutex mutex_;
  std::list<std::shared_ptr<IbRegion>> lru_;  // front: most recently used
  Counters counters_;
};

}  // namespace tiercc::ib
