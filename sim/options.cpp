// Parsing of tiercc-sim's command line (see options.hpp).
#include "sim/options.hpp"

#include <cmath>
#include <cstdlib>

#include "core/errors.hpp"
#include "core/units.hpp"
#include "runtime/tier_model.hpp"
#include "sim/size.hpp"

namespace tiercc::sim {
namespace {

long long parseCount(const std::string& v, const std::string& what, long long min) {
  char* end = nullptr;
  const long long n = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || n < min)
    fail(ErrorCode::InvalidArgument, what, " ", v, ": expected a whole number >= ", min);
  return n;
}

double parseFactor(const std::string& v, const std::string& what) {
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || !(x >= 1) || !std::isfinite(x))
    fail(ErrorCode::InvalidArgument, what, " ", v, ": expected a number >= 1 (1 = non-blocking)");
  return x;
}

std::vector<int> parseSplit(const std::string& v) {
  std::vector<int> parts;
  std::size_t start = 0;
  while (start <= v.size()) {
    const std::size_t plus = v.find('+', start);
    parts.push_back(static_cast<int>(parseCount(v.substr(start, plus - start), "--split", 1)));
    if (plus == std::string::npos) break;
    start = plus + 1;
  }
  return parts;
}

// A window the runtime could allocate: what TIERCC_SHM_CHUNK accepts.
std::size_t parseWindow(const std::string& v, const std::string& what) {
  const std::uint64_t bytes = parseSize(v, what);
  if (bytes < 4096 || bytes % 64 != 0)
    fail(ErrorCode::InvalidArgument, what, " ", v, ": a window is a multiple of 64 bytes, at least 4096");
  return static_cast<std::size_t>(bytes);
}

}  // namespace

const char* usage() {
  return "usage: tiercc-sim [--preset NAME] [--gpus N] [--domain G] [--scaleup BW] [--scaleout BW]\n"
         "                  [--scaleup-latency T] [--scaleout-latency T] [--oversub X]\n"
         "                  [--flat-inside scaleup|transport] [--window auto|SIZE] [--window-max SIZE]\n"
         "                  [--radix K] [--root R]\n"
         "                  [--op allreduce|reduce_scatter|allgather|broadcast|reduce|alltoall] [--bytes SIZE]\n"
         "                  [--algo auto|NAME] [--exact] [--steps] [--compare]\n"
         "                  [--sweep MIN:MAX [--factor F] [--json FILE]]\n"
         "                  [--placement --group N --split A+B[+...]] [--list-presets]\n"
         "Prices the runtime's own plans on a modelled cluster (docs/simulator.md).\n"
         "Every figure has a unit: bandwidths per GPU and direction (900GB/s, 800Gb/s = 100GB/s),\n"
         "latencies per step (1us), sizes in bytes (1GiB = 2^30 B, 1GB = 10^9 B).\n"
         "--oversub X: the scale-out core carries 1/X of what all NICs can send at once.\n"
         "--window: each rank's staging window; auto (the default, as the runtime's TIERCC_SHM_CHUNK=auto): the\n"
         "cost model's, from 4 MiB to --window-max (default TIERCC_SHM_CHUNK_MAX, 64 MiB).\n";
}

Options parseOptions(int argc, const char* const* argv, bool& help) {
  Options o;
  help = false;
  // The preset first, so that the other figures override it whatever their order.
  bool haveCluster = false;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--preset") {
      o.cluster = presetCluster(argv[i + 1]);
      haveCluster = true;
    }
  bool gpus = false, domain = false, up = false, out = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      help = true;
      return o;
    }
    if (a == "--exact") { o.exact = true; continue; }
    if (a == "--compare") { o.compare = true; continue; }
    if (a == "--steps") { o.steps = true; continue; }
    if (a == "--placement") { o.placement = true; continue; }
    if (a == "--list-presets") { o.listPresets = true; continue; }
    if (i + 1 >= argc) fail(ErrorCode::InvalidArgument, a, ": missing value (or unknown option; see --help)");
    const std::string v = argv[++i];
    if (a == "--preset") continue;
    else if (a == "--gpus") o.cluster.gpus = static_cast<int>(parseCount(v, a, 1)), gpus = true;
    else if (a == "--domain") o.cluster.domainSize = static_cast<int>(parseCount(v, a, 1)), domain = true;
    else if (a == "--scaleup") o.cluster.scaleUp.bytesPerSec = units::parseBandwidth(v, a), up = true;
    else if (a == "--scaleout") o.cluster.scaleOut.bytesPerSec = units::parseBandwidth(v, a), out = true;
    else if (a == "--scaleup-latency") o.cluster.scaleUp.latencySec = units::parseLatency(v, a);
    else if (a == "--scaleout-latency") o.cluster.scaleOut.latencySec = units::parseLatency(v, a);
    else if (a == "--oversub") o.cluster.oversub = parseFactor(v, a);
    else if (a == "--flat-inside") {
      if (v != "scaleup" && v != "transport") fail(ErrorCode::InvalidArgument, a, " ", v, ": scaleup or transport");
      o.cluster.flatInsideOnScaleUp = v == "scaleup";
    } else if (a == "--op") {
      if (!parseCollective(v, o.coll) || o.coll == Collective::AllToAllv || o.coll == Collective::Barrier)
        fail(ErrorCode::InvalidArgument, a, " ", v, ": allreduce, reduce_scatter, allgather, broadcast, reduce or alltoall");
    } else if (a == "--bytes") o.bytes = parseSize(v, a);
    else if (a == "--algo") o.algo = v;
    else if (a == "--sweep") {
      const auto colon = v.find(':');
      if (colon == std::string::npos) fail(ErrorCode::InvalidArgument, a, " ", v, ": expected MIN:MAX, e.g. 8B:1GiB");
      o.sweepMin = parseSize(v.substr(0, colon), a);
      o.sweepMax = parseSize(v.substr(colon + 1), a);
      if (o.sweepMin == 0 || o.sweepMin > o.sweepMax) fail(ErrorCode::InvalidArgument, a, " ", v, ": need 0 < MIN <= MAX");
    } else if (a == "--factor") {
      o.sweepFactor = parseFactor(v, a);
      if (o.sweepFactor <= 1) fail(ErrorCode::InvalidArgument, a, " ", v, ": the step factor must be > 1");
    } else if (a == "--json") o.json = v;
    else if (a == "--group") o.group = static_cast<int>(parseCount(v, a, 2));
    else if (a == "--split") o.split = parseSplit(v);
    else if (a == "--window")
      o.windowBytes = v == "auto" ? 0 : parseWindow(v, a);
    else if (a == "--window-max")
      o.windowMaxBytes = parseWindow(v, a);
    else if (a == "--radix") o.radix = static_cast<int>(parseCount(v, a, 2));
    else if (a == "--root") o.root = static_cast<int>(parseCount(v, a, 0));
    else fail(ErrorCode::InvalidArgument, "unknown option ", a, " (see --help)");
  }
  if (o.listPresets) return o;
  if (!haveCluster && !(gpus && domain && up && out))
    fail(ErrorCode::InvalidArgument, "name a --preset, or give --gpus, --domain, --scaleup and --scaleout");
  if (!haveCluster) o.cluster.name = "custom";
  else if (domain || up || out || o.cluster.oversub > 1) o.cluster.name += " (modified)";
  if (o.placement) {
    if (o.group == 0) fail(ErrorCode::InvalidArgument, "--placement needs --group N (the group's ranks)");
    if (o.split.empty()) fail(ErrorCode::InvalidArgument, "--placement needs --split A+B (the group's ranks per domain)");
    int sum = 0;
    for (int k : o.split) {
      sum += k;
      if (k > o.cluster.domainSize)
        fail(ErrorCode::InvalidArgument, "--split: ", k, " ranks do not fit a domain of ", o.cluster.domainSize);
    }
    if (sum != o.group) fail(ErrorCode::InvalidArgument, "--split parts add up to ", sum, ", not --group ", o.group);
  }
  return o;
}

std::size_t windowFor(const Options& o, const Shape& shape) {
  if (o.windowBytes) return o.windowBytes;
  WindowSetting setting;  // auto, up to --window-max or the runtime's largest
  setting.most = o.windowMaxBytes ? o.windowMaxBytes : windowSettingFromParams().most;
  return setting.resolve(shape, o.cluster.tierModel());
}

Options withWindowFor(Options o, const Shape& shape) {
  o.windowBytes = windowFor(o, shape);
  return o;
}

Request requestFor(const Options& o, std::uint64_t bytes, const Shape& shape) {
  const int ranks = shape.size();
  Request req;
  req.coll = o.coll;
  req.dt = DataType::F32;
  req.windowBytes = windowFor(o, shape);
  req.radix = o.radix;
  req.root = o.root;
  const std::uint64_t elems = bytes / dataTypeSize(req.dt);
  switch (o.coll) {
    case Collective::ReduceScatter:
    case Collective::AllGather:
    case Collective::AllToAll: req.count = elems / static_cast<std::uint64_t>(ranks); break;
    default: req.count = elems;
  }
  return req;
}

}  // namespace tiercc::sim
