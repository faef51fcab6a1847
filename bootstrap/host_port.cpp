// parseHostPort: turns a user-given store address ("host:port", "[v6]:port") into its parts,
// rejecting anything ambiguous with a message that quotes what was given.
#include <string_view>

#include "core/errors.hpp"
#include "bootstrap/store.hpp"

namespace tiercc {
namespace {

[[noreturn]] void badAddress(const std::string& text, const char* why) {
  fail(ErrorCode::InvalidArgument, "invalid store address '", text, "': ", why,
       " (expected host:port or [ipv6]:port, port 1-65535)");
}

std::uint16_t parsePort(const std::string& text, std::string_view digits, bool anyPort) {
  if (digits.empty()) badAddress(text, "missing port");
  std::uint32_t port = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') badAddress(text, "port is not a number");
    port = port * 10 + static_cast<std::uint32_t>(c - '0');
    if (port > 65535) badAddress(text, "port is out of range");
  }
  if (port == 0 && !anyPort) badAddress(text, "port 0 is not a valid store port");
  return static_cast<std::uint16_t>(port);
}

}  // namespace

void parseHostPort(const std::string& text, std::string& host, std::uint16_t& port, bool anyPort) {
  std::string_view view(text);
  std::string_view hostPart;
  std::string_view portPart;
  if (view.starts_with('[')) {
    auto close = view.find(']');
    if (close == std::string_view::npos) badAddress(text, "missing ']'");
    hostPart = view.substr(1, close - 1);
    std::string_view rest = view.substr(close + 1);
    if (!rest.starts_with(':')) badAddress(text, "missing ':port' after ']'");
    portPart = rest.substr(1);
  } else {
    auto colon = view.rfind(':');
    if (colon == std::string_view::npos) badAddress(text, "missing port");
    hostPart = view.substr(0, colon);
    portPart = view.substr(colon + 1);
    if (hostPart.find(':') != std::string_view::npos) badAddress(text, "IPv6 addresses need brackets");
  }
  if (hostPart.empty()) badAddress(text, "missing host");
  std::uint16_t parsed = parsePort(text, portPart, anyPort);
  host = std::string(hostPart);
  port = parsed;
}

}  // namespace tiercc
