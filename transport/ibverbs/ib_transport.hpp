// The ibverbs scale-out backend: one RC queue pair per peer on the chosen RDMA port, connected
// through the Store, all completing into one CQ whose completion channel a waiting rank sleeps
// on (after a short spin), so that any number of operations progress together without a busy loop.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "transport/factory.hpp"
#include "transport/transport.hpp"

namespace tiercc {

class Store;

/// Why ibverbs cannot run here (no device, no ACTIVE port, bad override), or nullopt. Cheap.
std::optional<std::string> ibverbsUnavailable();

/// Creates the ibverbs transport: picks device/port/GID, checks them with a loopback write,
/// publishes one QP address per peer of init under "net/<rank>/qp/<peer>" and connects them
/// (with a store for later peers, setup.connectAtInit, which must list this rank back; else every
/// peer). Any other peer connects on its first operation, through setup.laterStore.
std::unique_ptr<Transport> createIbverbsTransport(Store& store, const TransportSetup& setup);

/// Registration-cache counters of an ibverbs transport (tests and tiercc-info).
struct IbverbsCacheStats {
  std::size_t hits = 0, misses = 0, evictions = 0, entries = 0;
};
/// Throws InvalidArgument if `t` is not an ibverbs transport.
IbverbsCacheStats ibverbsCacheStats(Transport& t);

}  // namespace tiercc
