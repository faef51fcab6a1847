// Which NIC a rank's scale-out traffic leaves by: one NIC per rail, local rank r on NIC r, as on
// a rail-optimised cluster (GPU r of every node on rail r). Lists in TIERCC_SOCKET_IFNAME,
// TIERCC_SOCKET_IFADDR and TIERCC_IB_DEVICE are indexed by the local rank, modulo their length.
#pragma once

#include <string>

namespace tiercc {

/// Entry localRank % n of the comma-separated `list` ("" for an empty list). InvalidArgument
/// naming `param` for an empty entry ("a,,b").
std::string entryForLocalRank(const std::string& list, int localRank, const char* param);

/// Where the TCP transport listens, and why (for logs and tiercc-info):
///  - TIERCC_SOCKET_IFADDR when set (an address, or one per local rank);
///  - else TIERCC_SOCKET_IFNAME (interface names, or a prefix ending in '*': the interfaces that
///    are up with an IPv4 address and start with it, in name order), the local rank's entry;
///  - else, in a job that spans hosts, the first routable address (firstRoutableAddress());
///  - else 127.0.0.1.
/// InvalidArgument naming the parameter when it names no interface with an IPv4 address here.
std::string tcpListenAddress(int localRank, bool spansHosts, std::string& why);

}  // namespace tiercc
