// Memory registration for the UCX transport: a region is a ucp_mem_map handle plus its packed
// rkey; its descriptor carries address, size and rkey so a peer can ucp_put_nbx into it. The
// cache returns a live region for any range inside it, as the Transport contract asks.
#pragma once

#include <ucp/api/ucp.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "transport/transport.hpp"
#include "transport/ucx/ucx_context.hpp"

namespace tiercc::ucxnet {

class UcxRegion final : public MemoryRegion {
 public:
  /// Maps [data, data + size) with ucp_mem_map (nothing to map when size is 0).
  UcxRegion(std::shared_ptr<UcxContext> context, std::byte* data, std::size_t size);
  ~UcxRegion() override;
  std::byte* data() const override { return data_; }
  std::size_t size() const override { return size_; }
  Bytes descriptor() const override { return descriptor_; }

 private:
  std::shared_ptr<UcxContext> context_;
  std::byte* data_;
  std::size_t size_;
  ucp_mem_h memh_ = nullptr;
  Bytes descriptor_;
};

/// A peer's region as its descriptor tells it.
struct RemoteRegion {
  std::uint64_t address = 0;
  std::uint64_t size = 0;
  Bytes rkey;  ///< packed; empty for an empty region
};

/// Parses a UcxRegion descriptor; InvalidArgument if it is not one.
RemoteRegion parseDescriptor(const Bytes& descriptor);

/// Live registrations by range. Thread-safe.
class RegionCache {
 public:
  explicit RegionCache(std::shared_ptr<UcxContext> context) : context_(std::move(context)) {}
  std::shared_ptr<MemoryRegion> registerMemory(void* buf, std::size_t len);
  void invalidate(void* buf, std::size_t len);

 private:
  std::shared_ptr<UcxContext> context_;
  std::mutex mutex_;
  std::vector<std::weak_ptr<UcxRegion>> regions_;
};

}  // namespace tiercc::ucxnet
