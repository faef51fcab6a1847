#include "tools/run/job_secret.hpp"

#include <sys/random.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "core/errors.hpp"

namespace tiercc::run {

std::string jobSecret() {
  if (const char* given = std::getenv("TIERCC_STORE_SECRET"); given && *given) return given;
  std::array<unsigned char, 32> random{};
  std::size_t got = 0;
  while (got < random.size()) {
    const ssize_t n = ::getrandom(random.data() + got, random.size() - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      fail(ErrorCode::SystemError, "no randomness for the job's store secret: getrandom: ", std::strerror(errno));
    got += static_cast<std::size_t>(n);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string secret;
  for (unsigned char b : random) {
    secret += kHex[b >> 4];
    secret += kHex[b & 15];
  }
  return secret;
}

}  // namespace tiercc::run
