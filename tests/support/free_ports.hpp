// Ports for tests whose programs bind a fixed port (a store rank 0 hosts, metrics endpoints at
// a base plus the rank's index): below the kernel's ephemeral range, where no connection of the
// job can be handed one, and free when checked.
#pragma once

#include <cstdint>

namespace tiercc::test {

/// A port P with P .. P + count - 1 free on loopback now; 0 if none was found.
std::uint16_t freePortsBelowEphemeral(int count);

}  // namespace tiercc::test
