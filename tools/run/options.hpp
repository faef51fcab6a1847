// Command-line options of tiercc-run and their parsing.
// Parsing is separate from main so that every usage error is one InvalidArgument with a clear message.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace tiercc::run {

/// Where the store listens with --netns-prefix and no --store-bind: the root namespace's end of
/// the management network that bench/two-tier-net.sh builds (198.19.0.0/24).
inline constexpr const char* kNetnsStoreBind = "198.19.0.1";

struct RunOptions {
  int worldSize = 0;                       ///< -n N
  std::optional<int> domainSize;           ///< --domain-size K (unset: every rank is in domain 0)
  std::optional<std::string> transport;    ///< --transport tcp|ucx|ibverbs
  std::optional<double> timeoutSeconds;    ///< --timeout SEC
  std::string timeoutText;                 ///< SEC as the user wrote it, for the timeout message
  std::string storeBind = "127.0.0.1";     ///< --store-bind ADDR (kNetnsStoreBind with --netns-prefix)
  std::optional<std::string> netnsPrefix;  ///< --netns-prefix P: ranks of domain d run in netns P<d>
  std::optional<std::string> railSubnet;   ///< --rail-subnet A.B: TIERCC_SOCKET_IFADDR=A.B.<local>.<d+1>
  std::optional<int> metricsPort;          ///< --metrics-port P: rank r of a host serves /metrics on P + r
  std::optional<std::string> metricsAddr;  ///< --metrics-addr ADDR (default: 127.0.0.1, or the domain's
                                           ///< management address with --netns-prefix)
  std::optional<std::string> traceDir;     ///< --trace DIR: TIERCC_TRACE=DIR, merged into DIR/trace.json
  bool prefixOutput = true;                ///< cleared by --no-prefix
  bool verbose = false;                    ///< -v/--verbose
  bool help = false;                       ///< -h/--help: print usage and exit 0
  std::vector<std::string> command;        ///< the program and its arguments
};

/// Parses argv (argv[0] excluded by the caller's choice of first); Error{InvalidArgument} on bad usage.
RunOptions parseRunOptions(const std::vector<std::string>& args);

/// The usage text, ending with a newline.
std::string usageText();

/// The domain of a rank: rank / K, or 0 without --domain-size.
int domainOf(const RunOptions& options, int rank);

/// How many domains the job has (the last one may be smaller).
int domainCount(const RunOptions& options);

/// A rank's index inside its domain: rank % K, or the rank itself without --domain-size.
int localRankOf(const RunOptions& options, int rank);

/// The network namespace the rank runs in ("<prefix><domain>"); empty without --netns-prefix.
std::string netnsOf(const RunOptions& options, int rank);

/// The rank's rail address "A.B.<local rank>.<domain+1>"; empty without --rail-subnet.
std::string railAddressOf(const RunOptions& options, int rank);
/// Domain d's address on bench/two-tier-net.sh's management network, 198.19.0.<d+2>: with
/// --netns-prefix, where the other namespaces reach a server that a rank of domain d runs.
std::string managementAddressOf(int domain);

}  // namespace tiercc::run
