// The TCP scale-out backend: one Boost.Asio socket per peer, made non-blocking and driven by
// one poll(2) loop, so that any number of sends, receives and writes progress together (a
// pairwise exchange of large messages cannot deadlock) and a waiting rank sleeps in the kernel.
#pragma once

#include <memory>

#include "transport/factory.hpp"
#include "transport/transport.hpp"

namespace tiercc {

class Store;

/// Creates the TCP transport: listens on TIERCC_SOCKET_IFADDR, publishes "net/<rank>" in
/// `store`, then the lower rank of each pair connects and the higher one accepts.
std::unique_ptr<Transport> createTcpTransport(Store& store, const TransportSetup& setup);

}  // namespace tiercc
