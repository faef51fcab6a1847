// Parsing and printing of bandwidths and latencies (see units.hpp). Errors explain bits vs
// bytes, the mistake that makes a modelled link 8x off.
#include "core/units.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "core/errors.hpp"

namespace tiercc::units {
namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  size_t e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

/// A number with at most two decimals, trailing zeros dropped: 100, 12.5, 7.2.
std::string formatNumber(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.2f", v);
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    s.erase(s.find_last_not_of('0') + 1);
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

/// `v` with the largest decimal prefix that keeps it at least 1 (after rounding): "7.2 T".
std::string formatScaled(double v) {
  static const char* const kPrefixes[] = {"", "k", "M", "G", "T", "P"};
  int i = 0;
  while (i + 1 < 6 && std::fabs(v) >= 999.995) {
    v /= 1000;
    ++i;
  }
  return formatNumber(v) + " " + kPrefixes[i];
}

/// The leading unsigned decimal number of `text` ("12.5" of "12.5 GB/s"); its length in `used`,
/// 0 when there is none. No sign, exponent, inf or nan: those are not how people write rates.
double leadingNumber(const std::string& text, size_t& used) {
  used = 0;
  bool dot = false, digit = false;
  while (used < text.size()) {
    char c = text[used];
    if (c >= '0' && c <= '9') {
      digit = true;
    } else if (c == '.' && !dot) {
      dot = true;
    } else {
      break;
    }
    ++used;
  }
  double v = 0;
  if (!digit) {
    used = 0;
    return 0;
  }
  auto [end, ec] = std::from_chars(text.data(), text.data() + used, v, std::chars_format::fixed);
  if (ec != std::errc() || end != text.data() + used || !std::isfinite(v)) used = 0;
  return v;
}

/// Decimal (k, M, G, T, P) or binary (Ki, Mi, Gi, Ti, Pi) multiplier at the start of `unit`;
/// `used` gets its length (0 and 1.0 when the unit has no prefix).
double prefixScale(const std::string& unit, size_t& used) {
  static const std::string kLetters = "kMGTP";
  used = 0;
  if (unit.empty()) return 1;
  size_t power = kLetters.find(unit[0] == 'K' ? 'k' : unit[0]);
  if (power == std::string::npos) return 1;
  const bool binary = unit.size() > 1 && unit[1] == 'i';
  used = binary ? 2 : 1;
  return std::pow(binary ? 1024.0 : 1000.0, static_cast<double>(power + 1));
}

}  // namespace

double parseBandwidth(const std::string& input, const std::string& what) {
  const std::string text = trim(input);
  const std::string examples = " (examples: 100GB/s, 800Gbit/s, 800Gb/s, 12.5 GB/s, 4GiB/s)";
  size_t numberLen = 0;
  const double value = leadingNumber(text, numberLen);
  if (numberLen == 0) fail(ErrorCode::InvalidArgument, what, "='", input, "' is not a bandwidth", examples);
  const std::string number = text.substr(0, numberLen);
  const std::string unit = trim(text.substr(numberLen));

  size_t prefixLen = 0;
  const double scale = prefixScale(unit, prefixLen);
  const std::string prefix = unit.substr(0, prefixLen);
  std::string quantity = unit.substr(prefixLen);
  const bool perSecond = quantity.size() >= 2 && quantity.compare(quantity.size() - 2, 2, "/s") == 0;
  if (perSecond) quantity.resize(quantity.size() - 2);

  // The two mistakes worth a precise message: no unit at all ("800", "800G"), and a unit that
  // does not say whether it counts bits or bytes ("800G/s").
  const std::string shown = prefix.empty() ? "G" : prefix;
  if (quantity.empty() && !perSecond)
    fail(ErrorCode::InvalidArgument, what, "='", input, "': a bandwidth needs a unit: ", number, shown,
         "b/s (bits, as NICs are sold: ", formatNumber(value / 8), " ", shown, "B/s) or ", number, shown,
         "B/s (bytes)");
  if (quantity.empty())
    fail(ErrorCode::InvalidArgument, what, "='", input, "': bits or bytes? Write ", number, shown,
         "b/s (bits: ", formatNumber(value / 8), " ", shown, "B/s) or ", number, shown, "B/s (bytes)");

  double bytesPerUnit = 0;
  if (quantity == "B") bytesPerUnit = 1;
  if (quantity == "b" || quantity == "bit") bytesPerUnit = 1.0 / 8;
  if (bytesPerUnit == 0) fail(ErrorCode::InvalidArgument, what, "='", input, "' is not a bandwidth", examples);
  if (!perSecond)
    fail(ErrorCode::InvalidArgument, what, "='", input, "': a bandwidth is per second: ", number, unit, "/s");
  const double bytesPerSec = value * scale * bytesPerUnit;
  if (!(bytesPerSec > 0) || !std::isfinite(bytesPerSec))
    fail(ErrorCode::InvalidArgument, what, "='", input,
         "': a bandwidth must be positive (leave the "
         "parameter unset for no limit)");
  return bytesPerSec;
}

double parseLatency(const std::string& input, const std::string& what) {
  const std::string text = trim(input);
  size_t numberLen = 0;
  const double value = leadingNumber(text, numberLen);
  if (numberLen == 0)
    fail(ErrorCode::InvalidArgument, what, "='", input, "' is not a latency (examples: 500ns, 2us, 1.5ms, 0)");
  const std::string number = text.substr(0, numberLen);
  const std::string unit = trim(text.substr(numberLen));
  if (unit.empty()) {
    if (value == 0) return 0;
    fail(ErrorCode::InvalidArgument, what, "='", input, "': a latency needs a unit: ", number, "us, ", number, "ms or ",
         number, "ns");
  }
  double scale = 0;
  if (unit == "ns") scale = 1e-9;
  if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs") scale = 1e-6;  // u, micro sign, mu
  if (unit == "ms") scale = 1e-3;
  if (unit == "s") scale = 1;
  if (scale == 0)
    fail(ErrorCode::InvalidArgument, what, "='", input, "' is not a latency (units: ns, us, ms, s; e.g. 2us)");
  return value * scale;
}

std::string formatBandwidth(double bytesPerSec) {
  return formatScaled(bytesPerSec) + "B/s (" + formatScaled(bytesPerSec * 8) + "bit/s)";
}

std::string formatLatency(double seconds) {
  if (seconds == 0) return "0 s";
  static const char* const kUnits[] = {"ns", "us", "ms", "s"};
  double v = seconds * 1e9;
  int i = 0;
  while (i + 1 < 4 && v >= 999.995) {
    v /= 1000;
    ++i;
  }
  return formatNumber(v) + " " + kUnits[i];
}

std::size_t parseMessageSize(const std::string& text, const std::string& what) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  const std::string unit = end ? end : "";
  const double scale = unit.empty() || unit == "B"   ? 1
                       : unit == "K" || unit == "KB" ? 1024.0
                       : unit == "M" || unit == "MB" ? 1048576.0
                       : unit == "G" || unit == "GB" ? 1073741824.0
                                                     : -1;
  // !(... <= ...) also refuses NaN; the bound keeps the conversion defined (libFuzzer found
  // "2e53G", whose size_t is undefined behaviour).
  constexpr double kLargest = double(std::uint64_t{1} << 50);  // 1 PiB
  if (text.empty() || end == text.c_str() || scale < 0 || !(v >= 0 && v * scale <= kLargest))
    fail(ErrorCode::InvalidArgument, what, " ", text,
         ": expected bytes such as 8, 4K, 64M, 1G (binary, as nccl-tests), at most 1 PiB");
  return static_cast<std::size_t>(v * scale);
}

}  // namespace tiercc::units
