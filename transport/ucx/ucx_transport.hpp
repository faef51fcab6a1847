// The UCX scale-out backend: one ucp worker per transport, one endpoint per peer (created from
// worker addresses published in the Store), tagged messages for isend/irecv and ucp_put_nbx plus
// a tagged notification for one-sided writes. Waits block on the worker's event fd.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "transport/factory.hpp"
#include "transport/transport.hpp"

namespace tiercc {

class Store;

/// Why UCX cannot run here (ucp_init fails), or nullopt.
std::optional<std::string> ucxTransportUnavailable();

/// Why the default choice passes over UCX here (its only network transport is tcp), or nullopt.
std::optional<std::string> ucxTransportPassedOver();

/// Creates the UCX transport: publishes this worker's address as "net/<rank>" in `store`,
/// connects an endpoint to every peer and waits until every peer has done the same.
std::unique_ptr<Transport> createUcxTransport(Store& store, const TransportSetup& setup);

}  // namespace tiercc
