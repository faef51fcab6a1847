// Registrations and the registration cache (see ib_memory.hpp).
#include "transport/ibverbs/ib_memory.hpp"

#include <cstring>

#include "core/errors.hpp"

namespace tiercc::ib {

namespace {
constexpr std::uint32_t kDescriptorMagic = 0x42494354;  // "TCIB"
struct Descriptor {
  std::uint64_t addr;
  std::uint64_t len;
  std::uint32_t rkey;
  std::uint32_t magic;
};
static_assert(sizeof(Descriptor) == 24);
}  // namespace

Bytes IbRegion::descriptor() const {
  Descriptor d{reinterpret_cast<std::uintptr_t>(data_), size_, rkey(), kDescriptorMagic};
  Bytes out(sizeof(d));
  std::memcpy(out.data(), &d, sizeof(d));
  return out;
}

bool IbRegion::contains(const void* p, std::size_t len) const {
  auto* b = static_cast<const std::byte*>(p);
  return data_ <= b && len <= size_ && b - data_ <= static_cast<std::ptrdiff_t>(size_ - len);
}

bool RemoteRegion::parse(const Bytes& bytes, RemoteRegion& out) {
  Descriptor d{};
  if (bytes.size() != sizeof(d)) return false;
  std::memcpy(&d, bytes.data(), sizeof(d));
  if (d.magic != kDescriptorMagic) return false;
  out = {d.addr, d.len, d.rkey};
  return true;
}

std::shared_ptr<IbRegion> registerRegion(ibv_pd* pd, void* buf, std::size_t len) {
  if (len == 0) return std::make_shared<IbRegion>(nullptr, static_cast<std::byte*>(buf), 0);
  MrPtr mr(ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE));
  if (!mr) fail(ErrorCode::SystemError, "ibv_reg_mr of ", len, " bytes: ", std::strerror(errno),
                " (is the memlock limit, ulimit -l, too low?)");
  return std::make_shared<IbRegion>(std::move(mr), static_cast<std::byte*>(buf), len);
}

std::shared_ptr<IbRegion> RegistrationCache::findLocked(const void* buf, std::size_t len) {
  for (auto it = lru_.begin(); it != lru_.end(); ++it) {
    if (!(*it)->contains(buf, len)) continue;
    lru_.splice(lru_.begin(), lru_, it);  // now the most recently used
    return lru_.front();
  }
  return nullptr;
}

std::shared_ptr<IbRegion> RegistrationCache::acquire(void* buf, std::size_t len) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto hit = findLocked(buf, len)) {
    ++counters_.hits;
    return hit;
  }
  ++counters_.misses;
  auto region = registerRegion(pd_, buf, len);
  lru_.push_front(region);
  // Evicting only drops the cache's reference: a region still held stays registered.
  while (lru_.size() > maxEntries_) {
    lru_.pop_back();
    ++counters_.evictions;
  }
  return region;
}

std::shared_ptr<IbRegion> RegistrationCache::lookup(const void* buf, std::size_t len) {
  std::lock_guard<std::mutex> lock(mutex_);
  return findLocked(buf, len);
}

void RegistrationCache::invalidate(const void* buf, std::size_t len) {
  auto* b = static_cast<const std::byte*>(buf);
  std::lock_guard<std::mutex> lock(mutex_);
  lru_.remove_if([&](const std::shared_ptr<IbRegion>& r) { return r->data() < b + len && b < r->data() + r->size(); });
}

void RegistrationCache::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  lru_.clear();
}

RegistrationCache::Counters RegistrationCache::counters() {
  std::lock_guard<std::mutex> lock(mutex_);
  Counters c = counters_;
  c.entries = lru_.size();
  return c;
}

}  // namespace tiercc::ib
