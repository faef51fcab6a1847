// The parsers of what users type into the environment and the command line: durations,
// bandwidths, latencies, message sizes (core/units.*, core/params.*) and host:port addresses
// (bootstrap). Each refuses bad text with InvalidArgument, and what it accepts is in range.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "bootstrap/store.hpp"
#include "core/params.hpp"
#include "core/units.hpp"
#include "tests/fuzz/fuzz_check.hpp"

using tiercc::fuzz::finding;
using tiercc::fuzz::refusalIsFine;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (data[0] % 5) {
    case 0:
      refusalIsFine([&] {
        if (tiercc::params::parseDuration(text, "TIERCC_TIMEOUT").count() < 0) finding("a negative duration");
      });
      break;
    case 1:
      refusalIsFine([&] {
        const double v = tiercc::units::parseBandwidth(text, "TIERCC_SCALEOUT_BW");
        if (!std::isfinite(v) || v <= 0) finding("a bandwidth that is not a positive number");
      });
      break;
    case 2:
      refusalIsFine([&] {
        const double v = tiercc::units::parseLatency(text, "TIERCC_SCALEOUT_LATENCY");
        if (!std::isfinite(v) || v < 0) finding("a latency that is not a non-negative number");
      });
      break;
    case 3:
      refusalIsFine([&] { (void)tiercc::units::parseMessageSize(text, "--size"); });
      break;
    case 4:
      refusalIsFine([&] {
        std::string host;
        std::uint16_t port = 0;
        tiercc::parseHostPort(text, host, port, (size & 1) != 0);
        if (host.empty()) finding("an address with an empty host");
        if (port == 0 && (size & 1) == 0) finding("port 0 accepted where it is not allowed");
      });
      break;
  }
  return 0;
}
