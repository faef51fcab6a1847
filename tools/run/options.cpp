// Command-line options of tiercc-run and their parsing.
// Options stop at the first non-option word (or "--"), so the program keeps its own flags.
#include "tools/run/options.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "core/errors.hpp"

namespace tiercc::run {
namespace {

// A rank count beyond this is almost certainly a typo, and each rank costs two pipes.
constexpr long kMaxWorldSize = 4096;

int parsePositiveInt(const std::string& option, const std::string& text) {
  errno = 0;
  char* end = nullptr;
  long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || value < 1 || value > kMaxWorldSize) {
    fail(ErrorCode::InvalidArgument, option, " needs an integer from 1 to ", kMaxWorldSize, ", got '", text,
         "'");
  }
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
  return options;
}

std::string usageText() {
  return "usage: tiercc-run -n N [--domain-size K] [--transport tcp|ucx|ibverbs] [--timeout SEC]\n"
         "                  [--store-bind ADDR] [--no-prefix] [-v|--verbose] [--] prog args...\n"
         "  -n N               start N ranks on this machine\n"
         "  --domain-size K    group ranks into scale-up domains of K (the last may be smaller)\n"
         "  --transport T      scale-out transport the ranks use (sets TIERCC_TRANSPORT)\n"
         "  --timeout SEC      stop the job and exit 124 when it runs longer than SEC seconds\n"
         "  --store-bind ADDR  address the bootstrap store listens on (default 127.0.0.1)\n"
         "  --no-prefix        pass rank output through without \"[r<rank>.d<domain>] \" prefixes\n"
         "  -v, --verbose      describe the job before starting it\n";
}

int domainOf(const RunOptions& options, int rank) {
  return options.domainSize ? rank / *options.domainSize : 0;
}

int domainCount(const RunOptions& options) {
  if (!options.domainSize) return 1;
  return (options.worldSize + *options.domainSize - 1) / *options.domainSize;
}

}  // namespace tiercc::run
