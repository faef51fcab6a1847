#include "core/fault_injection.hpp"

#include <signal.h>

#include <atomic>
#include <charconv>
#include <thread>

#include "core/errors.hpp"
#include "core/log.hpp"

namespace tiercc {
namespace {

// Once per process: a fault is an event of the job, not of each communicator it makes.
std::atomic<bool> fired{false};

std::uint64_t number(const std::string& spec, const std::string& key, const std::string& value) {
  std::uint64_t n = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  TIERCC_REQUIRE_ARG(ec == std::errc() && end == value.data() + value.size() && !value.empty(), "TIERCC_FAULT='", spec,
                     "': ", key, "=", value, " is not a non-negative integer");
  return n;
}

const char* nameOf(FaultInjection::Action a) {
  switch (a) {
    case FaultInjection::Action::Kill:
      return "kill";
    case FaultInjection::Action::Stop:
      return "stop";
    case FaultInjection::Action::Stall:
      return "stall";
    case FaultInjection::Action::Error:
      return "error";
  }
  return "?";
}

}  // namespace

std::optional<FaultInjection> FaultInjection::parse(const std::string& text) {
  if (text.empty()) return std::nullopt;
  FaultInjection f;
  f.spec = text;
  bool haveRank = false, haveMs = false;
  std::size_t at = 0;
  for (int field = 0; at <= text.size(); ++field) {
    const std::size_t colon = std::min(text.find(':', at), text.size());
    const std::string part = text.substr(at, colon - at);
    at = colon + 1;
    if (field == 0) {
      if (part == "kill")
        f.action = Action::Kill;
      else if (part == "stop")
        f.action = Action::Stop;
      else if (part == "stall")
        f.action = Action::Stall;
      else if (part == "error")
        f.action = Action::Error;
      else
        fail(ErrorCode::InvalidArgument, "TIERCC_FAULT='", text, "': unknown action '", part,
             "' (expected kill, stop, stall or error, then :rank=R[:call=N][:step=S][:ms=M])");
      continue;
    }
    const std::size_t eq = part.find('=');
    TIERCC_REQUIRE_ARG(eq != std::string::npos, "TIERCC_FAULT='", text, "': '", part, "' is not key=value");
    const std::string key = part.substr(0, eq), value = part.substr(eq + 1);
    const std::uint64_t n = number(text, key, value);
    if (key == "rank") {
      TIERCC_REQUIRE_ARG(n <= 1u << 30, "TIERCC_FAULT='", text, "': rank=", value, " is out of range");
      f.rank = static_cast<int>(n);
      haveRank = true;
    } else if (key == "call") {
      f.call = n;
    } else if (key == "step") {
      f.step = static_cast<std::size_t>(n);
    } else if (key == "ms") {
      TIERCC_REQUIRE_ARG(n <= 24u * 3600 * 1000, "TIERCC_FAULT='", text, "': ms=", value, " is more than a day");
      f.stall = std::chrono::milliseconds(n);
      haveMs = true;
    } else {
      fail(ErrorCode::InvalidArgument, "TIERCC_FAULT='", text, "': unknown key '", key,
           "' (expected rank, call, step or ms)");
    }
  }
  TIERCC_REQUIRE_ARG(haveRank, "TIERCC_FAULT='", text, "': rank=R is required (which rank the fault hits)");
  TIERCC_REQUIRE_ARG(!haveMs || f.action == Action::Stall, "TIERCC_FAULT='", text, "': ms= applies only to stall");
  return f;
}

void FaultInjection::reached(std::uint64_t seq, std::size_t at, bool atEnd, const std::string& what) const {
  if (seq != call || (!atEnd && at != step)) return;
  if (fired.exchange(true)) return;
  TIERCC_LOG(Warn, Coll) << what << " step " << at << ": injecting " << nameOf(action) << " (TIERCC_FAULT=" << spec
                         << ")";
  switch (action) {
    case Action::Kill:
      ::raise(SIGKILL);
      break;
    case Action::Stop:
      ::raise(SIGSTOP);
      break;  // a SIGCONT lets it go on, as a host that wakes up
    case Action::Stall:
      std::this_thread::sleep_for(stall);
      break;
    case Action::Error:
      fail(ErrorCode::TransportError, what, " step ", at, ": injected fault (TIERCC_FAULT=", spec, ")");
  }
}

}  // namespace tiercc
