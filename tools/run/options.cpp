// Command-line options of tiercc-run and their parsing.
// Options stop at the first non-option word (or "--"), so the program keeps its own flags.
#include "tools/run/options.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "core/errors.hpp"

namespace tiercc::run {
namespace {

// A rank count beyond this is almost certainly a typo, and each rank costs two pipes.
constexpr long kMaxWorldSize = 4096;

int parsePositiveInt(const std::string& option, const std::string& text, long most = kMaxWorldSize) {
  errno = 0;
  char* end = nullptr;
  long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || value < 1 || value > most)
    fail(ErrorCode::InvalidArgument, option, " needs an integer from 1 to ", most, ", got '", text, "'");
  return static_cast<int>(value);
}

double parsePositiveSeconds(const std::string& option, const std::string& text) {
  errno = 0;
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno != 0 || !std::isfinite(value) || value <= 0) {
    fail(ErrorCode::InvalidArgument, option, " needs a positive number of seconds, got '", text, "'");
  }
  return value;
}

// A namespace name becomes a path under /run/netns: keep it to a plain file name.
std::string parseNetnsPrefix(const std::string& text) {
  bool plain = !text.empty() && text.size() <= 200 && text != "." && text != "..";
  for (char c : text) {
    plain = plain && (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.');
  }
  if (!plain) {
    fail(ErrorCode::InvalidArgument, "--netns-prefix needs a namespace name prefix of letters, digits, '-', '_'",
         " or '.', got '", text, "'");
  }
  return text;
}

// "A.B" with A and B in 0..255: the first two octets of every rail address.
std::string parseRailSubnet(const std::string& text) {
  unsigned a = 256, b = 256;
  char tail = '\0';
  bool digitsOnly = text.find_first_not_of("0123456789.") == std::string::npos;
  if (!digitsOnly || std::sscanf(text.c_str(), "%3u.%3u%c", &a, &b, &tail) != 2 || a > 255 || b > 255) {
    fail(ErrorCode::InvalidArgument, "--rail-subnet needs two octets like 198.18, got '", text, "'");
  }
  return std::to_string(a) + "." + std::to_string(b);
}

// Rail addresses put the local rank in the third octet and domain+1 in the fourth (1..254).
void checkRailAddressesFit(const RunOptions& options) {
  int ranksPerDomain = options.domainSize ? std::min(*options.domainSize, options.worldSize) : options.worldSize;
  if (ranksPerDomain > 256) {
    fail(ErrorCode::InvalidArgument, "--rail-subnet gives local ranks 0..255 only, the job has ", ranksPerDomain,
         " ranks per domain");
  }
  if (domainCount(options) > 254) {
    fail(ErrorCode::InvalidArgument, "--rail-subnet gives domains 0..253 only, the job has ",
         domainCount(options), " domains");
  }
}

// Splits "--name=value" into name and value; other words come back unchanged with no value.
void splitInlineValue(const std::string& word, std::string& name, std::optional<std::string>& value) {
  auto eq = word.find('=');
  if (word.rfind("--", 0) == 0 && eq != std::string::npos) {
    name = word.substr(0, eq);
    value = word.substr(eq + 1);
  } else if (word != "-np" && word.size() > 2 && word.rfind("-n", 0) == 0 && word[2] != '-') {
    name = "-n";  // "-n8", as mpirun accepts
    value = word.substr(2);
  } else {
    name = word;
    value.reset();
  }
}

}  // namespace

RunOptions parseRunOptions(const std::vector<std::string>& args) {
  RunOptions options;
  bool sawWorldSize = false;
  bool sawStoreBind = false;
  std::size_t i = 0;
  while (i < args.size()) {
    const std::string& word = args[i];
    if (word == "--") {
      ++i;
      break;
    }
    if (word.empty() || word[0] != '-') break;
    std::string name;
    std::optional<std::string> inlineValue;
    splitInlineValue(word, name, inlineValue);
    ++i;
    auto takeValue = [&]() -> std::string {
      if (inlineValue) return *inlineValue;
      if (i >= args.size()) fail(ErrorCode::InvalidArgument, "option ", name, " needs a value");
      return args[i++];
    };
    auto noValue = [&]() {
      if (inlineValue) fail(ErrorCode::InvalidArgument, "option ", name, " takes no value");
    };
    if (name == "-n" || name == "-np" || name == "--np") {
      options.worldSize = parsePositiveInt(name, takeValue());
      sawWorldSize = true;
    } else if (name == "--domain-size") {
      options.domainSize = parsePositiveInt(name, takeValue());
    } else if (name == "--transport") {
      std::string t = takeValue();
      if (t != "tcp" && t != "ucx" && t != "ibverbs") {
        fail(ErrorCode::InvalidArgument, "--transport must be tcp, ucx or ibverbs, got '", t, "'");
      }
      options.transport = t;
    } else if (name == "--timeout") {
      options.timeoutText = takeValue();
      options.timeoutSeconds = parsePositiveSeconds(name, options.timeoutText);
    } else if (name == "--store-bind") {
      options.storeBind = takeValue();
      if (options.storeBind.empty()) fail(ErrorCode::InvalidArgument, "--store-bind needs an address");
      sawStoreBind = true;
    } else if (name == "--netns-prefix") {
      options.netnsPrefix = parseNetnsPrefix(takeValue());
    } else if (name == "--rail-subnet") {
      options.railSubnet = parseRailSubnet(takeValue());
    } else if (name == "--metrics-port") {
      options.metricsPort = parsePositiveInt(name, takeValue(), 65535);
    } else if (name == "--metrics-addr") {
      options.metricsAddr = takeValue();
      if (options.metricsAddr->empty()) fail(ErrorCode::InvalidArgument, "--metrics-addr needs an address");
    } else if (name == "--trace") {
      options.traceDir = takeValue();
      if (options.traceDir->empty()) fail(ErrorCode::InvalidArgument, "--trace needs a folder");
    } else if (name == "--no-prefix") {
      noValue();
      options.prefixOutput = false;
    } else if (name == "-v" || name == "--verbose") {
      noValue();
      options.verbose = true;
    } else if (name == "-h" || name == "--help") {
      noValue();
      options.help = true;
      return options;
    } else {
      fail(ErrorCode::InvalidArgument, "unknown option '", word, "'");
    }
  }
  options.command.assign(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
  if (!sawWorldSize) fail(ErrorCode::InvalidArgument, "missing -n N (the number of ranks)");
  if (options.command.empty()) fail(ErrorCode::InvalidArgument, "missing the program to run");
  // Ranks in other namespaces cannot reach the launcher's loopback.
  if (options.netnsPrefix && !sawStoreBind) options.storeBind = kNetnsStoreBind;
  if (options.railSubnet) checkRailAddressesFit(options);
  return options;
}

std::string usageText() {
  return "usage: tiercc-run -n N [--domain-size K] [--transport tcp|ucx|ibverbs] [--timeout SEC]\n"
         "                  [--store-bind ADDR] [--netns-prefix P] [--rail-subnet A.B]\n"
         "                  [--metrics-port P [--metrics-addr ADDR]] [--trace DIR] [--no-prefix]\n"
         "                  [-v|--verbose]\n"
         "                  [--] prog args...\n"
         "  -n N               start N ranks on this machine\n"
         "  --domain-size K    group ranks into scale-up domains of K (the last may be smaller)\n"
         "  --transport T      scale-out transport the ranks use (sets TIERCC_TRANSPORT)\n"
         "  --timeout SEC      stop the job and exit 124 when it runs longer than SEC seconds\n"
         "  --store-bind ADDR  address the bootstrap store listens on (default 127.0.0.1,\n"
         "                     198.19.0.1 with --netns-prefix)\n"
         "  --netns-prefix P   run the ranks of domain d in network namespace P<d> (/run/netns/P<d>)\n"
         "                     and give them TIERCC_DOMAIN_ID=d; see bench/two-tier-net.sh\n"
         "  --rail-subnet A.B  give each rank TIERCC_SOCKET_IFADDR=A.B.<local rank>.<domain+1>,\n"
         "                     its rail's address in bench/two-tier-net.sh's plan (A.B = 198.18)\n"
         "  --metrics-port P   each rank serves Prometheus metrics on http://ADDR:P+i/metrics, i its\n"
         "                     index on its host (sets TIERCC_METRICS_PORT and TIERCC_METRICS_ADDR)\n"
         "  --metrics-addr A   address the metrics endpoints listen on (default 127.0.0.1; with\n"
         "                     --netns-prefix, the domain's management address)\n"
         "  --trace DIR        each rank writes its timeline into DIR (TIERCC_TRACE); at the end they\n"
         "                     are merged into DIR/trace.json (Perfetto, chrome://tracing, tiercc-trace)\n"
         "  --no-prefix        pass rank output through without \"[r<rank>.d<domain>] \" prefixes\n"
         "  -v, --verbose      describe the job before starting it\n";
}

int domainOf(const RunOptions& options, int rank) {
  return options.domainSize ? rank / *options.domainSize : 0;
}

int localRankOf(const RunOptions& options, int rank) {
  return options.domainSize ? rank % *options.domainSize : rank;
}

std::string netnsOf(const RunOptions& options, int rank) {
  if (!options.netnsPrefix) return {};
  return *options.netnsPrefix + std::to_string(domainOf(options, rank));
}

std::string railAddressOf(const RunOptions& options, int rank) {
  if (!options.railSubnet) return {};
  return concat(*options.railSubnet, ".", localRankOf(options, rank), ".", domainOf(options, rank) + 1);
}

std::string managementAddressOf(int domain) { return concat("198.19.0.", domain + 2); }

int domainCount(const RunOptions& options) {
  if (!options.domainSize) return 1;
  return (options.worldSize + *options.domainSize - 1) / *options.domainSize;
}

}  // namespace tiercc::run
