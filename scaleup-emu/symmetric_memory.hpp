// Symmetric memory of a Domain: allocations that every rank of the domain makes together and
// maps from every peer, so that a collective can read a peer's buffer in place (zero copy).
// The registry answers "is this pointer inside an allocation, where" and "where is the same
// allocation of peer p mapped here".
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace tiercc {

/// Where a byte range lies in the symmetric heap: allocation id (the same on every rank) and offset.
struct SymmetricRef {
  std::uint32_t id = 0;
  std::uint64_t offset = 0;
};

class SymmetricMemory {
 public:
  virtual ~SymmetricMemory() = default;
  /// The allocation holding all of [p, p + bytes), or nullopt when the range is not (wholly) in one.
  virtual std::optional<SymmetricRef> find(const void* p, std::size_t bytes) const = 0;
  /// Local rank `peer`'s copy of allocation `ref.id`, mapped in this process, at `ref.offset`.
  virtual std::byte* peerAddress(int peer, const SymmetricRef& ref) const = 0;
  /// Live allocations; the same on every rank of the domain between collective calls.
  virtual std::size_t liveAllocations() const = 0;
};

}  // namespace tiercc
