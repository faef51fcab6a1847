// UCX memory regions and their cache (see ucx_region.hpp).
#include "transport/ucx/ucx_region.hpp"

#include <cstring>

#include "core/errors.hpp"

namespace tiercc::ucxnet {

namespace {

constexpr std::uint32_t kDescriptorMagic = 0x52584355;  // "UCXR"

struct DescriptorHead {
  std::uint32_t magic;
  std::uint32_t rkeyBytes;
  std::uint64_t address;
  std::uint64_t size;
};
static_assert(sizeof(DescriptorHead) == 24);

}  // namespace

UcxRegion::UcxRegion(std::shared_ptr<UcxContext> context, std::byte* data, std::size_t size)
    : context_(std::move(context)), data_(data), size_(size) {
  void* rkey = nullptr;
  std::size_t rkeyBytes = 0;
  if (size_ > 0) {
    std::lock_guard<std::mutex> lock(context_->memoryMutex());
    ucp_mem_map_params_t params{};
    params.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
    params.address = data_;
    params.length = size_;
    ucs_status_t status = ucp_mem_map(context_->get(), &params, &memh_);
    if (status != UCS_OK)
      fail(ErrorCode::TransportError, "ucx transport: registering ", size_, " bytes: ucp_mem_map: ", statusText(status));
    status = ucp_rkey_pack(context_->get(), memh_, &rkey, &rkeyBytes);
    if (status != UCS_OK) {
      ucp_mem_unmap(context_->get(), memh_);
      fail(ErrorCode::TransportError, "ucx transport: ucp_rkey_pack: ", statusText(status));
    }
  }
  DescriptorHead head{kDescriptorMagic, static_cast<std::uint32_t>(rkeyBytes),
                      reinterpret_cast<std::uintptr_t>(data_), size_};
  descriptor_.resize(sizeof(head) + rkeyBytes);
  std::memcpy(descriptor_.data(), &head, sizeof(head));
  if (rkeyBytes) std::memcpy(descriptor_.data() + sizeof(head), rkey, rkeyBytes);
  if (rkey) ucp_rkey_buffer_release(rkey);
}

UcxRegion::~UcxRegion() {
  if (!memh_) return;
  std::lock_guard<std::mutex> lock(context_->memoryMutex());
  ucp_mem_unmap(context_->get(), memh_);
}

RemoteRegion parseDescriptor(const Bytes& descriptor) {
  DescriptorHead head{};
  if (descriptor.size() >= sizeof(head)) std::memcpy(&head, descriptor.data(), sizeof(head));
  TIERCC_REQUIRE_ARG(head.magic == kDescriptorMagic && descriptor.size() == sizeof(head) + head.rkeyBytes,
                     "iwrite: remote descriptor of ", descriptor.size(), " bytes is not a ucx region descriptor");
  RemoteRegion out;
  out.address = head.address;
  out.size = head.size;
  out.rkey.assign(descriptor.begin() + sizeof(head), descriptor.end());
  return out;
}

std::shared_ptr<MemoryRegion> RegionCache::registerMemory(void* buf, std::size_t len) {
  TIERCC_REQUIRE_ARG(buf || len == 0, "registerMemory: null buffer");
  auto* p = static_cast<std::byte*>(buf);
  std::lock_guard<std::mutex> lock(mutex_);
  std::shared_ptr<UcxRegion> hit;
  std::erase_if(regions_, [&](const std::weak_ptr<UcxRegion>& weak) {
    auto live = weak.lock();
    if (live && !hit && live->data() <= p && p + len <= live->data() + live->size()) hit = live;
    return !live;
  });
  if (hit) return hit;
  auto region = std::make_shared<UcxRegion>(context_, p, len);
  regions_.push_back(region);
  return region;
}

void RegionCache::invalidate(void* buf, std::size_t len) {
  auto* p = static_cast<std::byte*>(buf);
  std::lock_guard<std::mutex> lock(mutex_);
  std::erase_if(regions_, [&](const std::weak_ptr<UcxRegion>& weak) {
    auto live = weak.lock();
    return !live || (live->data() < p + len && p < live->data() + live->size());
  });
}

}  // namespace tiercc::ucxnet
