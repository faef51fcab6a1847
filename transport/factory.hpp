// Creating a scale-out transport by name: each backend listens, publishes its address through
// the Store, and connects to the peers it will talk to. Also tells whether a backend can run
// here and, if not, why (tiercc-info, test skips, the default choice).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tiercc/deadline.hpp"
#include "transport/transport.hpp"

namespace tiercc {

class Store;

struct TransportSetup {
  int rank = 0;
  int worldSize = 0;
  std::vector<int> peers;  ///< ranks this rank may address
  /// The peers connected before creation returns, a symmetric subset of `peers` (those every plan
  /// uses: the rails). The others connect on their first operation, through `laterStore`, so
  /// that a job of N ranks holds O(rails) connections per rank, not N - 1.
  std::vector<int> connectAtInit;
  /// Where the peers connected later publish their addresses (the store passed at creation,
  /// kept alive). Null: every peer in `peers` connects at init, and connectAtInit is ignored.
  std::shared_ptr<Store> laterStore;
  int localRank = 0;                         ///< in its domain: which rail, so which NIC
  bool spansHosts = false;                   ///< some peer is on another host (TCP listens off loopback)
  std::function<std::string(int)> peerName;  ///< rank -> "rank 5 (domain 1, local rank 1)"
  Deadline deadline{Clock::time_point::max()};
};

/// Backends compiled into this build, in order of preference: "ibverbs", "ucx", "tcp".
std::vector<std::string> transportNames();

/// Why `name` cannot run on this machine, or nullopt if it can (e.g. "ibverbs unavailable:
/// no RDMA device"). Unknown names give a reason listing the known ones.
std::optional<std::string> transportUnavailable(const std::string& name);

/// Why the default choice passes over `name` although it can run here (UCX whose only network
/// transport is tcp: tiercc's own tcp transport is faster), or nullopt.
std::optional<std::string> transportPassedOver(const std::string& name);

/// The transport TIERCC_TRANSPORT asks for, or the first that can run here and is not passed
/// over: ibverbs where an RDMA device is, ucx where UCX has a network transport besides tcp, tcp.
std::string defaultTransportName();

/// Creates the named transport. `store` must be private to this communicator: each rank
/// publishes its address under "net/<rank>" and reads its peers'. All ranks call it together.
/// The first operation with a peer connected later needs that peer to make progress on this
/// transport (any wait or test of it), as a rendezvous does.
std::unique_ptr<Transport> createTransport(const std::string& name, Store& store, const TransportSetup& setup);

}  // namespace tiercc
