// The ibverbs transport's messages as they land in a receive slot, and the region descriptors
// peers exchange (transport/ibverbs/): messageFault() must refuse what is short, has a bad magic
// or kind, or an eager payload that is not what arrived; what it accepts must be whole.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "tests/fuzz/fuzz_check.hpp"
#include "transport/ibverbs/ib_connection.hpp"
#include "transport/ibverbs/ib_memory.hpp"

using tiercc::fuzz::finding;
namespace ib = tiercc::ib;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::span<const std::byte> message(reinterpret_cast<const std::byte*>(data + 1), size - 1);
  if (data[0] & 1) {
    tiercc::Bytes descriptor(data + 1, data + size);
    ib::RemoteRegion region{};
    (void)ib::RemoteRegion::parse(descriptor, region);
    return 0;
  }
  constexpr std::size_t kEagerLimit = 8192;
  ib::MsgHeader header;
  if (ib::messageFault(message, kEagerLimit, header)) return 0;
  if (message.size() < sizeof(header) || header.magic != ib::kHeaderMagic)
    finding("a short or unmarked message accepted");
  if (header.kind == ib::MsgKind::Eager && (header.len > kEagerLimit || message.size() != sizeof(header) + header.len))
    finding("an eager message accepted whose payload is not what arrived");
  return 0;
}
