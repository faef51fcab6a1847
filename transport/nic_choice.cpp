#include "transport/nic_choice.hpp"

#include <algorithm>
#include <vector>

#include "bootstrap/local_address.hpp"
#include "core/errors.hpp"
#include "core/params.hpp"

namespace tiercc {

std::string entryForLocalRank(const std::string& list, int localRank, const char* param) {
  if (list.empty()) return "";
  std::vector<std::string> entries;
  for (std::size_t at = 0;;) {
    const std::size_t comma = list.find(',', at);
    entries.push_back(list.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    TIERCC_REQUIRE_ARG(!entries.back().empty(), param, "='", list, "' has an empty entry");
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return entries[static_cast<std::size_t>(std::max(localRank, 0)) % entries.size()];
}

namespace {

std::string interfacesHere(const std::vector<std::pair<std::string, std::string>>& all) {
  std::string out;
  for (const auto& [name, address] : all) out += concat(out.empty() ? "" : ", ", name, " ", address);
  return out.empty() ? "none" : out;
}

// The IPv4 address of the interface TIERCC_SOCKET_IFNAME gives this local rank.
std::string addressByName(const std::string& list, int localRank, std::string& why) {
  const auto all = ipv4Interfaces();
  if (list.find(',') == std::string::npos && list.size() > 1 && list.back() == '*') {
    const std::string prefix = list.substr(0, list.size() - 1);
    std::vector<std::pair<std::string, std::string>> candidates;
    for (const auto& i : all)
      if (i.first.rfind(prefix, 0) == 0) candidates.push_back(i);
    std::sort(candidates.begin(), candidates.end());
    candidates.erase(std::unique(candidates.begin(), candidates.end(),
                                 [](const auto& a, const auto& b) { return a.first == b.first; }),
                     candidates.end());
    TIERCC_REQUIRE_ARG(!candidates.empty(), "TIERCC_SOCKET_IFNAME='", list,
                       "': no interface here is up with an IPv4 address and starts with '", prefix,
                       "' (interfaces: ", interfacesHere(all), ")");
    const auto& chosen = candidates[static_cast<std::size_t>(std::max(localRank, 0)) % candidates.size()];
    why = concat(chosen.first, ", TIERCC_SOCKET_IFNAME=", list, " for local rank ", localRank);
    return chosen.second;
  }
  const std::string wanted = entryForLocalRank(list, localRank, "TIERCC_SOCKET_IFNAME");
  for (const auto& i : all)
    if (i.first == wanted) {
      why = concat(wanted, ", TIERCC_SOCKET_IFNAME=", list, " for local rank ", localRank);
      return i.second;
    }
  fail(ErrorCode::InvalidArgument, "TIERCC_SOCKET_IFNAME='", list, "' gives local rank ", localRank, " interface ",
       wanted, ", which is not up with an IPv4 address here (interfaces: ", interfacesHere(all), ")");
}

}  // namespace

std::string tcpListenAddress(int localRank, bool spansHosts, std::string& why) {
  if (const std::string list = params::getString("TIERCC_SOCKET_IFADDR"); !list.empty()) {
    const std::string address = entryForLocalRank(list, localRank, "TIERCC_SOCKET_IFADDR");
    why = list.find(',') == std::string::npos ? "TIERCC_SOCKET_IFADDR"
                                              : concat("TIERCC_SOCKET_IFADDR for local rank ", localRank);
    return address;
  }
  if (const std::string names = params::getString("TIERCC_SOCKET_IFNAME"); !names.empty())
    return addressByName(names, localRank, why);
  if (spansHosts) {
    why = "the first routable address: the job spans hosts";
    return firstRoutableAddress();
  }
  why = "loopback: every rank is on this host";
  return "127.0.0.1";
}

}  // namespace tiercc
