// Message sizes with explicit units for tiercc-sim ("1GiB", "64MB", "8B"). A size is bytes, so a
// bare number, a bit unit ("8Gb") or an ambiguous "1G" is rejected with an explanation, as
// core/units.hpp does for bandwidths.
#pragma once

#include <cstdint>
#include <string>

namespace tiercc::sim {

/// Parses a size into bytes: "8B", "4KiB", "64MiB", "1GiB" (binary), "1kB", "1MB", "1GB"
/// (decimal, 1 GB = 1e9 B), "1.5MiB"; a space may separate number and unit. Throws
/// InvalidArgument naming `what` for a bare number ("1024": write 1024B or 1KiB), a bit unit
/// ("1Gb", "8Mbit": sizes are bytes), "1G"/"1K" (binary or decimal?) and fractional bytes.
std::uint64_t parseSize(const std::string& text, const std::string& what);
/// "1 GiB", "64 MiB", "12 KiB", "8 B": the largest binary unit that keeps an integer or two decimals.
std::string formatSize(double bytes);

}  // namespace tiercc::sim
