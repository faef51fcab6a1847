// Bandwidths and latencies with explicit units, parsed and printed. Bits and bytes are both in
// use (NICs are sold in Gbit/s, NVLink in GB/s), so a bandwidth without a unit is an error here.
#pragma once

#include <cstddef>
#include <string>

namespace tiercc::units {

/// Parses a bandwidth into bytes per second. Accepts decimal SI prefixes (k, M, G, T, P:
/// 1 GB/s = 1e9 bytes/s), binary ones (KiB/s, MiB/s, GiB/s, TiB/s) and bits ("Gb/s" and
/// "Gbit/s" are bits; 800 Gbit/s = 100 GB/s); a space may separate number and unit. A bare
/// number, a missing "/s" or "G/s" (bits or bytes?) throws InvalidArgument naming `what`.
double parseBandwidth(const std::string& text, const std::string& what);
/// Parses a latency into seconds: "500ns", "2us", "1.5ms", "1s"; "0" alone needs no unit.
double parseLatency(const std::string& text, const std::string& what);

/// Parses a message size as nccl-tests and tiercc-perf write them: "8", "8B", "4K", "64M", "1G"
/// (binary: K = 1024); anything else throws InvalidArgument naming `what`.
std::size_t parseMessageSize(const std::string& text, const std::string& what);

/// "100 GB/s (800 Gbit/s)": bytes first, then bits, decimal prefixes.
std::string formatBandwidth(double bytesPerSec);
/// "2 us", "1.5 ms", "0 s".
std::string formatLatency(double seconds);

}  // namespace tiercc::units
