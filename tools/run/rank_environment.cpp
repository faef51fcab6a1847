// The environment each rank starts with: the launcher's own, plus the TIERCC_* variables
// that tell a rank where the store is and who it is.
#include "tools/run/rank_environment.hpp"

#include <unistd.h>

#include <algorithm>
#include <string_view>
#include <utility>

namespace tiercc::run {

std::string storeAddressForRanks(const std::string& bindAddress, std::uint16_t port) {
  std::string host = bindAddress;
  if (host == "0.0.0.0") host = "127.0.0.1";
  if (host == "::" || host == "[::]") host = "::1";
  if (host.find(':') != std::string::npos && host.front() != '[') host = "[" + host + "]";
  return host + ":" + std::to_string(port);
}

std::vector<std::string> rankEnvironment(const RunOptions& options, const JobAddresses& addresses, int rank) {
  std::vector<std::pair<std::string, std::string>> ours = {
      {"TIERCC_STORE", addresses.store},
      {"TIERCC_RANK", std::to_string(rank)},
      {"TIERCC_WORLD_SIZE", std::to_string(options.worldSize)},
      {"TIERCC_LOCAL_LAUNCH", "1"},
  };
  if (!addresses.storeSecret.empty()) ours.emplace_back("TIERCC_STORE_SECRET", addresses.storeSecret);
  if (options.domainSize) ours.emplace_back("TIERCC_DOMAIN_SIZE", std::to_string(*options.domainSize));
  if (options.transport) ours.emplace_back("TIERCC_TRANSPORT", *options.transport);
  // Namespaces share /dev/shm and the hostname, so host identity cannot tell their domains apart.
  if (options.netnsPrefix) ours.emplace_back("TIERCC_DOMAIN_ID", std::to_string(domainOf(options, rank)));
  if (options.railSubnet) ours.emplace_back("TIERCC_SOCKET_IFADDR", railAddressOf(options, rank));
  if (options.traceDir) ours.emplace_back("TIERCC_TRACE", *options.traceDir);
  if (options.metricsPort) {
    // In a namespace, the launcher's side reaches a rank at its domain's management address only.
    const std::string addr = options.metricsAddr   ? *options.metricsAddr
                             : options.netnsPrefix ? managementAddressOf(domainOf(options, rank))
                                                   : "127.0.0.1";
    ours.emplace_back("TIERCC_METRICS_PORT", std::to_string(*options.metricsPort));
    ours.emplace_back("TIERCC_METRICS_ADDR", addr);
  }
  // torchrun's names, so that torch.distributed.init_process_group() finds the job as it does
  // under torchrun. A domain stands for a host: LOCAL_RANK counts inside it.
  ours.emplace_back("RANK", std::to_string(rank));
  ours.emplace_back("WORLD_SIZE", std::to_string(options.worldSize));
  ours.emplace_back("LOCAL_RANK", std::to_string(localRankOf(options, rank)));
  const int domainSize = options.domainSize ? *options.domainSize : options.worldSize;
  const int domainStart = domainOf(options, rank) * domainSize;
  ours.emplace_back("LOCAL_WORLD_SIZE", std::to_string(std::min(domainSize, options.worldSize - domainStart)));
  if (addresses.torchMasterPort) {
    ours.emplace_back("MASTER_ADDR", addresses.torchMasterAddr);
    ours.emplace_back("MASTER_PORT", std::to_string(addresses.torchMasterPort));
  }

  std::vector<std::string> env;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    std::string_view text(*entry);
    bool replaced = false;
    for (const auto& [name, value] : ours) {
      if (text.size() > name.size() && text.substr(0, name.size()) == name && text[name.size()] == '=') {
        replaced = true;
        break;
      }
    }
    if (!replaced) env.emplace_back(text);
  }
  for (const auto& [name, value] : ours) env.push_back(name + "=" + value);
  return env;
}

}  // namespace tiercc::run
