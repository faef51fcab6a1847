// Parsing and printing of message sizes (see size.hpp).
#include "sim/size.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "core/errors.hpp"

namespace tiercc::sim {
namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

}  // namespace

std::uint64_t parseSize(const std::string& input, const std::string& what) {
  const std::string text = trim(input);
  std::size_t n = 0;
  bool digit = false, dot = false;
  while (n < text.size() && ((text[n] >= '0' && text[n] <= '9') || (text[n] == '.' && !dot))) {
    digit = digit || text[n] != '.';
    dot = dot || text[n] == '.';
    ++n;
  }
  if (!digit) fail(ErrorCode::InvalidArgument, what, "='", input, "' is not a size (examples: 8B, 64KiB, 1MiB, 1GiB, 1GB)");
  const std::string number = text.substr(0, n), unit = trim(text.substr(n));
  const double value = std::strtod(number.c_str(), nullptr);
  if (unit.empty())
    fail(ErrorCode::InvalidArgument, what, "='", input, "': a size needs a unit: ", number, "B (bytes), ", number,
         "KiB, ", number, "MiB or ", number, "GiB (binary) or ", number, "kB, MB, GB (decimal)");
  static const std::string kLetters = "kMGTP";
  double scale = 0;
  std::string rest = unit;
  const std::size_t power = kLetters.find(unit[0] == 'K' ? 'k' : unit[0]);
  if (power != std::string::npos) {
    const bool binary = unit.size() > 1 && unit[1] == 'i';
    scale = std::pow(binary ? 1024.0 : 1000.0, static_cast<double>(power + 1));
    rest = unit.substr(binary ? 2 : 1);
  } else {
    scale = 1;
  }
  const std::string prefix = unit.substr(0, unit.size() - rest.size());
  if (rest == "b" || rest == "bit" || rest == "bits")
    fail(ErrorCode::InvalidArgument, what, "='", input, "' counts bits; a message size is bytes: ", number, prefix,
         "B (", number, " ", prefix, "bit = ", value / 8, " ", prefix, "B)");
  if (rest.empty())
    fail(ErrorCode::InvalidArgument, what, "='", input, "': binary or decimal? Write ", number, prefix.substr(0, 1),
         "iB (powers of 1024, as nccl-tests' ", number, prefix.substr(0, 1), ") or ", number, prefix.substr(0, 1), "B (powers of 1000)");
  if (rest != "B") fail(ErrorCode::InvalidArgument, what, "='", input, "' is not a size (examples: 8B, 64KiB, 1MiB, 1GiB, 1GB)");
  const double bytes = value * scale;
  if (!std::isfinite(bytes) || bytes >= 1.8e19)
    fail(ErrorCode::InvalidArgument, what, "='", input, "' is too large");
  if (bytes != std::floor(bytes)) fail(ErrorCode::InvalidArgument, what, "='", input, "' is not a whole number of bytes");
  return static_cast<std::uint64_t>(bytes);
}

std::string formatSize(double bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int i = 0;
  while (i + 1 < 6 && std::fabs(bytes) >= 1024) {
    bytes /= 1024;
    ++i;
  }
  char buf[64];
  if (bytes == std::floor(bytes)) std::snprintf(buf, sizeof(buf), "%.0f %s", bytes, kUnits[i]);
  else std::snprintf(buf, sizeof(buf), "%.2f %s", bytes, kUnits[i]);
  return buf;
}

}  // namespace tiercc::sim
