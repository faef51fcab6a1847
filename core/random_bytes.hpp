// Bytes from the kernel's randomness (getrandom): store secrets and unique ids.
#pragma once

#include <cstddef>
#include <string>

namespace tiercc {

/// Fills out[0, n) with random bytes; SystemError naming `forWhat` if the kernel has none.
void randomBytes(void* out, std::size_t n, const char* forWhat);

/// Lower-case hex of bytes[0, n).
std::string toHex(const void* bytes, std::size_t n);

}  // namespace tiercc
