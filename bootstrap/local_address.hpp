// The address a store that other hosts must reach listens on, when nobody named one, and the
// interfaces a rank may choose its scale-out NIC from.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace tiercc {

/// The first IPv4 address of an interface that is up and not loopback (as NCCL's bootstrap
/// picks one), else 127.0.0.1: a one-host job still works with no network configured.
std::string firstRoutableAddress();

/// Every interface that is up with an IPv4 address: (name, address), in the kernel's order.
std::vector<std::pair<std::string, std::string>> ipv4Interfaces();

}  // namespace tiercc
