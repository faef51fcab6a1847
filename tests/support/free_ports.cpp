// Ports below the ephemeral range (see free_ports.hpp).
#include "tests/support/free_ports.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace tiercc::test {
namespace {

bool freeNow(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool free = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return free;
}

}  // namespace

std::uint16_t freePortsBelowEphemeral(int count) {
  int ephemeralLow = 32768;
  if (FILE* f = std::fopen("/proc/sys/net/ipv4/ip_local_port_range", "r")) {
    if (std::fscanf(f, "%d", &ephemeralLow) != 1) ephemeralLow = 32768;
    std::fclose(f);
  }
  const int low = 10000, span = std::max(1000, ephemeralLow - low - count);
  for (int attempt = 0; attempt < 100; ++attempt) {
    const int port = low + static_cast<int>((getpid() * 7919L + attempt * 104729L) % span);
    bool all = true;
    for (int p = port; p < port + count && all; ++p) all = freeNow(p);
    if (all) return static_cast<std::uint16_t>(port);
  }
  return 0;
}

}  // namespace tiercc::test
