// Dead-peer detection for endpoints UCX cannot watch itself: UCX 1.13's shared-memory transports
// (posix, sysv, cma) have no peer-failure support, so such endpoints run without error handling
// and the transport checks instead whether the peer's process (same host) still exists.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace tiercc::ucxnet {

/// Who a process is: host boot id, pid and start time (pids are reused; start times are not).
struct ProcessIdentity {
  std::string bootId;
  int pid = 0;
  std::uint64_t startTime = 0;

  static ProcessIdentity self();
  std::string serialize() const;
  static std::optional<ProcessIdentity> parse(const std::string& text);
  /// False once the process has exited (or is a zombie); only meaningful on the same host.
  bool alive() const;
};

}  // namespace tiercc::ucxnet
