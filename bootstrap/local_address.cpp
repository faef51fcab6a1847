#include "bootstrap/local_address.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

namespace tiercc {

namespace {

// (name, address, loopback) of every interface that is up with an IPv4 address.
struct Ipv4Interface {
  std::string name, address;
  bool loopback;
};

std::vector<Ipv4Interface> upIpv4Interfaces() {
  std::vector<Ipv4Interface> out;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return out;
  for (ifaddrs* i = list; i; i = i->ifa_next) {
    if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP)) continue;
    char text[INET_ADDRSTRLEN] = {};
    const auto* in = reinterpret_cast<const sockaddr_in*>(i->ifa_addr);
    if (inet_ntop(AF_INET, &in->sin_addr, text, sizeof text))
      out.push_back({i->ifa_name, text, (i->ifa_flags & IFF_LOOPBACK) != 0});
  }
  freeifaddrs(list);
  return out;
}

}  // namespace

std::string firstRoutableAddress() {
  for (const Ipv4Interface& i : upIpv4Interfaces())
    if (!i.loopback) return i.address;
  return "127.0.0.1";
}

std::vector<std::pair<std::string, std::string>> ipv4Interfaces() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const Ipv4Interface& i : upIpv4Interfaces()) out.emplace_back(i.name, i.address);
  return out;
}

}  // namespace tiercc
