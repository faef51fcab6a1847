#include "tools/run/job_secret.hpp"

#include <array>
#include <cstdlib>

#include "core/random_bytes.hpp"

namespace tiercc::run {

std::string jobSecret() {
  if (const char* given = std::getenv("TIERCC_STORE_SECRET"); given && *given) return given;
  std::array<unsigned char, 32> random{};
  randomBytes(random.data(), random.size(), "the job's store secret");
  return toHex(random.data(), random.size());
}

}  // namespace tiercc::run
