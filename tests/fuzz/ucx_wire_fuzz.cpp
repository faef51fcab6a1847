// What UCX peers exchange besides their payloads (transport/ucx/): a remote region's descriptor
// (parseDescriptor refuses anything but a whole one with InvalidArgument) and a process's
// identity as published in the store (parse() returns nullopt on anything malformed).
#include <cstddef>
#include <cstdint>
#include <string>

#include "tests/fuzz/fuzz_check.hpp"
#include "transport/ucx/ucx_liveness.hpp"
#include "transport/ucx/ucx_region.hpp"

using tiercc::fuzz::finding;
using tiercc::fuzz::refusalIsFine;
namespace ucxnet = tiercc::ucxnet;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  if (data[0] & 1) {
    const tiercc::Bytes descriptor(data + 1, data + size);
    refusalIsFine([&] {
      const ucxnet::RemoteRegion region = ucxnet::parseDescriptor(descriptor);
      if (region.rkey.size() + 24 != descriptor.size()) finding("a descriptor's rkey is not the rest of it");
    });
    return 0;
  }
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  if (auto identity = ucxnet::ProcessIdentity::parse(text)) {
    auto again = ucxnet::ProcessIdentity::parse(identity->serialize());
    if (!again || again->pid != identity->pid || again->startTime != identity->startTime ||
        again->bootId != identity->bootId)
      finding("a parsed identity does not survive serialize()");
  }
  return 0;
}
