#include "tools/run/free_port.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/errors.hpp"

namespace tiercc::run {

std::uint16_t freeTcpPort(const std::string& host) {
  sockaddr_storage addr{};
  socklen_t len = 0;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&addr);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&addr);
  if (inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    len = sizeof(*v4);
  } else if (inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    len = sizeof(*v6);
  } else {
    fail(ErrorCode::InvalidArgument, "cannot pick a port on '", host, "': not an IPv4 or IPv6 address");
  }
  const int fd = ::socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fail(ErrorCode::SystemError, "socket: ", std::strerror(errno));
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const int err = errno;
    ::close(fd);
    fail(ErrorCode::SystemError, "cannot bind a port on ", host, ": ", std::strerror(err));
  }
  ::close(fd);
  return ntohs(addr.ss_family == AF_INET ? v4->sin_port : v6->sin6_port);
}

}  // namespace tiercc::run
