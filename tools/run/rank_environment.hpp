// The environment each rank starts with: the launcher's own, plus the TIERCC_* variables
// that tell a rank where the store is and who it is.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/run/options.hpp"

namespace tiercc::run {

/// "host:port" the ranks should connect to for a store bound to bindAddress:port
/// (a wildcard bind is reached through loopback; IPv6 literals get brackets).
std::string storeAddressForRanks(const std::string& bindAddress, std::uint16_t port);

/// The inherited environment (environ) with the launcher's TIERCC_* variables for `rank` set
/// (TIERCC_DOMAIN_ID with --netns-prefix, TIERCC_SOCKET_IFADDR with --rail-subnet),
/// replacing any inherited values of the same names. Entries are "NAME=value".
std::vector<std::string> rankEnvironment(const RunOptions& options, const std::string& storeAddress,
                                         int rank);

}  // namespace tiercc::run
