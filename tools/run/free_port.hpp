// A TCP port the kernel reports free on an address, for PyTorch's store under tiercc-run (rank 0
// of torch.distributed's env:// rendezvous binds MASTER_PORT itself, so the launcher can only
// name one: the kernel's pick is what torchrun --standalone-style launchers rely on too).
#pragma once

#include <cstdint>
#include <string>

namespace tiercc::run {

/// Binds port 0 on host (an IPv4 or IPv6 literal), reads the port the kernel chose and closes
/// the socket. Error{SystemError} when no socket can be bound there.
std::uint16_t freeTcpPort(const std::string& host);

}  // namespace tiercc::run
