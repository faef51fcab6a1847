// The TCP transport's wire header (transport/tcp/tcp_connection.hpp) as a peer may send it:
// headerFault() must refuse every bad magic and kind, and fitsInRegion() must accept only
// targets that lie inside the region, for any 64-bit offset, length and size.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "tests/fuzz/fuzz_check.hpp"
#include "transport/tcp/tcp_connection.hpp"

using tiercc::fuzz::finding;
namespace tcpnet = tiercc::tcpnet;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  tcpnet::WireHeader header{};
  std::uint64_t regionSize = 0;
  if (size < sizeof(header)) return 0;
  std::memcpy(&header, data, sizeof(header));
  if (size >= sizeof(header) + sizeof(regionSize)) std::memcpy(&regionSize, data + sizeof(header), sizeof(regionSize));
  const bool accepted = !tcpnet::headerFault(header).has_value();
  const bool wellFormed =
      header.magic == tcpnet::kMagic && (header.kind == tcpnet::Kind::Send || header.kind == tcpnet::Kind::Write);
  if (accepted != wellFormed) finding("headerFault() disagrees with the header's magic and kind");
  const unsigned __int128 end = static_cast<unsigned __int128>(header.offset) + header.len;
  if (tcpnet::fitsInRegion(header.offset, header.len, regionSize) != (end <= regionSize))
    finding("fitsInRegion() disagrees with offset + len <= size");
  return 0;
}
