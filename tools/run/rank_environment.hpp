// The environment each rank starts with: the launcher's own, plus the TIERCC_* variables
// that tell a rank where the store is and who it is, and torchrun's, for torch.distributed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/run/options.hpp"

namespace tiercc::run {

/// "host:port" the ranks should connect to for a store bound to bindAddress:port
/// (a wildcard bind is reached through loopback; IPv6 literals get brackets).
std::string storeAddressForRanks(const std::string& bindAddress, std::uint16_t port);

/// Where the ranks meet: tiercc's store, and where rank 0 hosts PyTorch's store (port 0 when
/// the launcher's environment already sets MASTER_ADDR and MASTER_PORT, which then stay).
struct JobAddresses {
  std::string store;
  std::string torchMasterAddr;  ///< an address of rank 0 that every rank reaches
  std::uint16_t torchMasterPort = 0;
  std::string storeSecret;  ///< TIERCC_STORE_SECRET of every rank (run/job_secret.hpp)
};

/// The inherited environment (environ) with the launcher's TIERCC_* variables for `rank` set
/// (TIERCC_DOMAIN_ID with --netns-prefix, TIERCC_SOCKET_IFADDR with --rail-subnet), and
/// torchrun's (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, and MASTER_ADDR/MASTER_PORT when
/// torchMasterPort is set), replacing any inherited values of the same names. Entries are
/// "NAME=value".
std::vector<std::string> rankEnvironment(const RunOptions& options, const JobAddresses& addresses, int rank);

}  // namespace tiercc::run
