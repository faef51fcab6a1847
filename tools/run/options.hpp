// Command-line options of tiercc-run and their parsing.
// Parsing is separate from main so that every usage error is one InvalidArgument with a clear message.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace tiercc::run {

struct RunOptions {
  int worldSize = 0;                     ///< -n N
  std::optional<int> domainSize;         ///< --domain-size K (unset: every rank is in domain 0)
  std::optional<std::string> transport;  ///< --transport tcp|ucx|ibverbs
  std::optional<double> timeoutSeconds;  ///< --timeout SEC
  std::string timeoutText;               ///< SEC as the user wrote it, for the timeout message
  std::string storeBind = "127.0.0.1";   ///< --store-bind ADDR
  bool prefixOutput = true;              ///< cleared by --no-prefix
  bool verbose = false;                  ///< -v/--verbose
  bool help = false;                     ///< -h/--help: print usage and exit 0
  std::vector<std::string> command;      ///< the program and its arguments
};

/// Parses argv (argv[0] excluded by the caller's choice of first); Error{InvalidArgument} on bad usage.
RunOptions parseRunOptions(const std::vector<std::string>& args);

/// The usage text, ending with a newline.
std::string usageText();

/// The domain of a rank: rank / K, or 0 without --domain-size.
int domainOf(const RunOptions& options, int rank);

/// How many domains the job has (the last one may be smaller).
int domainCount(const RunOptions& options);

}  // namespace tiercc::run
