// The one registry of TIERCC_* parameters: each declared once (params.cpp) with type, default
// and description; values come from the environment, and each knows where it came from.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tiercc::params {

struct Info {
  const char* name;          ///< e.g. "TIERCC_TIMEOUT"
  /// "int", "string", "secret" (a string never shown), "duration", "bool", "bandwidth", "latency"
  const char* type;
  const char* defaultValue;  ///< as text; "" when unset by default
  const char* doc;
};

/// Every registered parameter, in declaration order.
const std::vector<Info>& all();
/// The raw value (environment, else default) of a registered parameter; throws Internal if unknown.
std::string raw(const std::string& name);
/// "environment" or "default".
std::string source(const std::string& name);
/// Parsed values; a malformed value throws InvalidArgument naming the parameter and what it expects.
std::int64_t getInt(const std::string& name);
std::string getString(const std::string& name);
bool getBool(const std::string& name);
/// Durations accept a unit: "300s", "1500ms", "5m"; a bare number means seconds.
std::chrono::milliseconds getDuration(const std::string& name);
/// Parses a duration text as getDuration does; throws InvalidArgument naming `what`.
std::chrono::milliseconds parseDuration(const std::string& text, const std::string& what);
/// Bytes per second; the text needs a unit that says bits or bytes (core/units.hpp). Unset: nullopt.
std::optional<double> getBandwidth(const std::string& name);
/// Seconds; the text needs a unit ("2us"), except "0" (core/units.hpp). Unset: nullopt.
std::optional<double> getLatency(const std::string& name);

}  // namespace tiercc::params
