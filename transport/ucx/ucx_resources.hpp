// What UCX finds on this machine: each memory domain's transports and their devices, by UCT's
// own enumeration (what UCX_TLS and UCX_NET_DEVICES choose from). tiercc-info prints them, and
// the default transport choice asks whether any reaches another host by more than sockets.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace tiercc::ucxnet {

struct UcxResource {
  std::string memoryDomain;  ///< "tcp", "mlx5_0", "posix"
  std::string transport;     ///< "tcp", "rc_mlx5", "posix"
  std::string device;        ///< "eth0", "mlx5_0:1", "memory"
  bool network = false;      ///< a network device (it reaches other hosts), not memory or self
};

/// Every transport of every memory domain UCX can open here, or UCX's reason for none.
struct UcxResources {
  std::vector<UcxResource> list;
  std::optional<std::string> error;  ///< "uct_query_components: ..." when enumeration failed
};
UcxResources ucxResources();

/// Why the default choice of transport passes over UCX although it runs (nullopt: it does not):
/// every network transport UCX has here is tcp, which tiercc's own tcp transport does with less
/// around it (tiercc-perf's 2x2 allreduce in a third of the time, half the start-up CPU;
/// docs/design.md, "Tier 1"). Computed once per process.
std::optional<std::string> ucxOnlyHasSockets();

}  // namespace tiercc::ucxnet
