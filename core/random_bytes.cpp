#include "core/random_bytes.hpp"

#include <sys/random.h>

#include <cerrno>
#include <cstring>

#include "core/errors.hpp"

namespace tiercc {

void randomBytes(void* out, std::size_t n, const char* forWhat) {
  auto* p = static_cast<unsigned char*>(out);
  std::size_t got = 0;
  while (got < n) {
    const ssize_t r = ::getrandom(p + got, n - got, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) fail(ErrorCode::SystemError, "no randomness for ", forWhat, ": getrandom: ", std::strerror(errno));
    got += static_cast<std::size_t>(r);
  }
}

std::string toHex(const void* bytes, std::size_t n) {
  static constexpr char kHex[] = "0123456789abcdef";
  const auto* p = static_cast<const unsigned char*>(bytes);
  std::string hex;
  hex.reserve(2 * n);
  for (std::size_t i = 0; i < n; ++i) {
    hex += kHex[p[i] >> 4];
    hex += kHex[p[i] & 15];
  }
  return hex;
}

}  // namespace tiercc
