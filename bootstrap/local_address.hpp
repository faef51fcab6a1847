// The address a store that other hosts must reach listens on, when nobody named one.
#pragma once

#include <string>

namespace tiercc {

/// The first IPv4 address of an interface that is up and not loopback (as NCCL's bootstrap
/// picks one), else 127.0.0.1: a one-host job still works with no network configured.
std::string firstRoutableAddress();

}  // namespace tiercc
