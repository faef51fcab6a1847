// tiercc-sim: prices the runtime's own plans (collectives/plan) on a modelled cluster, from one
// NVL72 rack to 100,000 GPUs: time, algbw and busbw, bytes per tier and per rail against the
// slow-tier bound, and the busiest link. It has no algorithm of its own (docs/simulator.md).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "core/errors.hpp"
#include "core/units.hpp"
#include "plan/registry.hpp"
#include "sim/options.hpp"
#include "sim/simulate.hpp"
#include "sim/size.hpp"

namespace {

using namespace tiercc;
using namespace tiercc::sim;

struct Priced {
  Plan plan;
  Result result;
  bool ok = false;
  std::string why;
};

Priced priceOne(const Options& o, const std::string& algo, std::uint64_t bytes, const Shape& shape, const Cluster& c) {
  Priced p;
  const Request req = requestFor(o, bytes, shape);
  if (req.count == 0) {
    p.why = concat(formatSize(double(bytes)), " is less than one f32 element per rank");
    return p;
  }
  if (algo != "auto") {
    p.why = unknownAlgorithmReason(req.coll, algo);
    Algorithm a;
    if (p.why.empty() && parseAlgorithm(algo, a)) p.why = unsupportedReason(a, req, shape);
    if (!p.why.empty()) return p;
  }
  p.plan = planFor(algo, req, shape, c);
  p.result = simulate(p.plan, shape, c, o.exact ? Mode::Exact : Mode::Symmetric);
  p.ok = true;
  return p;
}

double algbw(const Priced& p) { return p.result.seconds > 0 ? double(p.plan.bytes) / p.result.seconds : 0; }
double busbw(const Priced& p, int n) { return algbw(p) * busFactor(p.plan.coll, n); }

std::string gbps(double bytesPerSec) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f GB/s", bytesPerSec / 1e9);
  return buf;
}

std::string duration(double s) { return units::formatLatency(s); }

std::string percent(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f%%", 100 * x);
  return buf;
}

std::string shapeWords(const Shape& s) {
  std::ostringstream out;
  out << s.size() << " GPUs in " << s.numDomains() << " domain" << (s.numDomains() == 1 ? "" : "s");
  if (s.uniform())
    out << " of " << s.maxDomainSize();
  else
    out << " of " << s.minDomainSize() << " to " << s.maxDomainSize();
  return out.str();
}

void printRails(const Result& r) {
  if (r.railBytes.empty()) {
    std::printf(
        "  per rail         : not followed (uneven domains and too many messages; try --exact on fewer GPUs)\n");
    return;
  }
  double lo = r.railBytes[0], hi = r.railBytes[0];
  int busy = 0;
  for (double b : r.railBytes) {
    lo = std::min(lo, b);
    hi = std::max(hi, b);
    busy += b > 0;
  }
  std::printf("  per rail         : %zu rails, %d carry scale-out bytes; ", r.railBytes.size(), busy);
  if (hi == lo)
    std::printf("every rail %s\n", formatSize(hi).c_str());
  else
    std::printf("least %s, most %s\n", formatSize(lo).c_str(), formatSize(hi).c_str());
}

// `o` with its window resolved (withWindowFor); `autoWindow`: the cost model chose it.
void printOne(const Options& o, bool autoWindow, const Priced& p, const Shape& s, const Cluster& c) {
  const Result& r = p.result;
  const int D = s.numDomains();
  std::printf("%s of %s on %s: %s%s, %s mode\n", toString(p.plan.coll), formatSize(double(p.plan.bytes)).c_str(),
              shapeWords(s).c_str(), toString(p.plan.algorithm),
              o.algo == "auto" ? " (chosen as the runtime would)" : "",
              r.mode == Mode::Exact ? "exact (per-rank flows)" : "symmetric");
  std::printf("  predicted time   : %s\n", duration(r.seconds).c_str());
  std::printf("  algbw / busbw    : %s / %s (busbw = algbw x %.4f, nccl-tests)\n", gbps(algbw(p)).c_str(),
              gbps(busbw(p, s.size())).c_str(), busFactor(p.plan.coll, s.size()));
  std::printf("  scale-up bytes   : %s in all\n", formatSize(r.scaleUpBytes).c_str());
  std::printf("  scale-out bytes  : %s in all, %s leaving each domain on average\n",
              formatSize(r.scaleOutBytes).c_str(), formatSize(r.scaleOutBytes / D).c_str());
  const double boundT = boundSeconds(p.plan, s, c);
  std::printf(
      "  slow-tier bound  : %s in all (%s per domain); sent %.3fx the bound; the NICs need >= %s (%s of the time)\n",
      formatSize(double(p.plan.boundBytes)).c_str(), formatSize(double(p.plan.boundBytes) / D).c_str(),
      p.plan.boundBytes ? r.scaleOutBytes / double(p.plan.boundBytes) : 0.0, duration(boundT).c_str(),
      percent(r.seconds > 0 ? boundT / r.seconds : 0).c_str());
  printRails(r);
  std::printf("  busiest NIC      : %s: %s, busy %s = %s of the time\n", r.busiestScaleOut.name.c_str(),
              formatSize(r.busiestScaleOut.bytes).c_str(), duration(r.busiestScaleOut.seconds).c_str(),
              percent(r.seconds > 0 ? r.busiestScaleOut.seconds / r.seconds : 0).c_str());
  std::printf("  busiest up port  : %s: %s, busy %s = %s of the time\n", r.busiestScaleUp.name.c_str(),
              formatSize(r.busiestScaleUp.bytes).c_str(), duration(r.busiestScaleUp.seconds).c_str(),
              percent(r.seconds > 0 ? r.busiestScaleUp.seconds / r.seconds : 0).c_str());
  // How close the plan comes to what its busiest link allows (the issue-16 check: within 1.2x).
  const double busiest = busiestLinkSeconds(r, p.plan, s, c);
  const std::size_t window = o.windowBytes;
  std::string cut;
  if (p.plan.windowBytes && p.plan.windowBytes < window)
    cut = concat(" cut from 1/", window / p.plan.windowBytes, " of");
  std::printf(
      "  pipeline         : %u fragment%s of %s per block, %u in flight,%s a window of %s per rank (%s); %.2fx the "
      "busiest link's time, %.2fx the slow-tier bound's\n",
      p.plan.fragments, p.plan.fragments == 1 ? "" : "s",
      formatSize(double(p.plan.fragmentCount * p.plan.elementBytes)).c_str(), p.plan.slots, cut.c_str(),
      formatSize(double(window)).c_str(), autoWindow ? "auto: the cost model's" : "--window",
      busiest > 0 ? r.seconds / busiest : 0.0, boundT > 0 ? r.seconds / boundT : 0.0);
  if (c.oversub > 1)
    std::printf("  fabric core      : busy %s (%s of the time), oversubscribed %g:1\n",
                duration(r.fabricSeconds).c_str(), percent(r.seconds > 0 ? r.fabricSeconds / r.seconds : 0).c_str(),
                c.oversub);
  if (r.stepsPricedWhole)
    std::printf("  note             : %d step(s) have no per-rank description and are priced as in symmetric mode\n",
                r.stepsPricedWhole);
  if (o.steps) {
    std::printf("  steps:\n");
    for (std::size_t i = 0; i < p.plan.steps.size(); ++i) {
      const Step& st = p.plan.steps[i];
      std::printf("    %-5s %-58s %10s  busiest link %s, %g latency steps\n",
                  st.tier == Tier::ScaleOut ? "[out]" : "[up]", st.what.c_str(), duration(r.stepSeconds[i]).c_str(),
                  formatSize(st.busiestBytes).c_str(), st.latencySteps);
    }
  }
}

void printCompare(const Options& o, const Shape& s, const Cluster& c) {
  const Priced chosen = priceOne(o, "auto", o.bytes, s, c);
  std::printf("%s of %s on %s, %s mode, every algorithm:\n", toString(o.coll), formatSize(double(o.bytes)).c_str(),
              shapeWords(s).c_str(), o.exact ? "exact" : "symmetric");
  std::printf(
      "| algorithm | time | busbw | scale-out bytes | out of each domain | x bound | busiest NIC busy |\n"
      "|---|---:|---:|---:|---:|---:|---:|\n");
  for (const AlgorithmEntry* e : algorithmsFor(o.coll)) {
    const std::string algo = toString(e->algorithm);
    const Priced p = priceOne(o, algo, o.bytes, s, c);
    if (!p.ok) {
      std::printf("| %s | - | - | - | - | - | cannot run: %s |\n", algo.c_str(), p.why.c_str());
      continue;
    }
    const bool isChosen = chosen.ok && toString(chosen.plan.algorithm) == algo;
    std::printf("| %s%s | %s | %s | %s | %s | %.3f | %s |\n", algo.c_str(), isChosen ? " (auto)" : "",
                duration(p.result.seconds).c_str(), gbps(busbw(p, s.size())).c_str(),
                formatSize(p.result.scaleOutBytes).c_str(), formatSize(p.result.scaleOutBytes / s.numDomains()).c_str(),
                p.plan.boundBytes ? p.result.scaleOutBytes / double(p.plan.boundBytes) : 0.0,
                percent(p.result.seconds > 0 ? p.result.busiestScaleOut.seconds / p.result.seconds : 0).c_str());
  }
}

void sweep(const Options& o, const Shape& s, const Cluster& c) {
  std::ofstream file;
  if (!o.json.empty()) {
    file.open(o.json, std::ios::trunc);
    if (!file) fail(ErrorCode::InvalidArgument, "--json ", o.json, ": cannot write");
  }
  std::ostream& out = o.json.empty() ? std::cout : file;
  std::vector<std::string> algos;
  if (o.compare)
    for (const AlgorithmEntry* e : algorithmsFor(o.coll)) algos.push_back(toString(e->algorithm));
  else
    algos.push_back(o.algo);
  for (double b = double(o.sweepMin); b <= double(o.sweepMax) * (1 + 1e-9); b *= o.sweepFactor) {
    const auto bytes = static_cast<std::uint64_t>(std::llround(b));
    for (const std::string& algo : algos) {
      const Priced p = priceOne(o, algo, bytes, s, c);
      if (!p.ok) continue;
      const double us = p.result.seconds * 1e6, alg = algbw(p) / 1e9, bus = busbw(p, s.size()) / 1e9;
      const std::size_t count = requestFor(o, bytes, s).count;
      out << "{\"coll\":\"" << toString(o.coll) << "\",\"ranks\":" << s.size() << ",\"domains\":" << s.numDomains()
          << ",\"algo\":\"" << algo << "\",\"chosen\":\"" << toString(p.plan.algorithm)
          << "\",\"buffers\":\"model\",\"cluster\":\"" << c.name << "\",\"mode\":\""
          << (o.exact ? "exact" : "symmetric") << "\",\"bytes\":" << p.plan.bytes << ",\"count\":" << count
          << ",\"type\":\"f32\",\"op\":\"sum\",\"oop_time_us\":" << us << ",\"oop_algbw\":" << alg
          << ",\"oop_busbw\":" << bus << ",\"ip_time_us\":" << us << ",\"ip_algbw\":" << alg << ",\"ip_busbw\":" << bus
          << ",\"wrong\":0,\"scaleup_bytes\":" << p.result.scaleUpBytes
          << ",\"scaleout_bytes\":" << p.result.scaleOutBytes << ",\"bound_bytes\":" << p.plan.boundBytes << "}\n";
    }
  }
  if (!o.json.empty()) std::printf("sweep: wrote %s\n", o.json.c_str());
}

Shape splitShape(const std::vector<int>& parts) {
  Shape s;
  for (std::size_t d = 0; d < parts.size(); ++d) {
    s.domainSizes.push_back(parts[d]);
    s.domainOf.insert(s.domainOf.end(), parts[d], static_cast<int>(d));
  }
  return s;
}

void placement(const Options& o, const Cluster& c) {
  std::printf("%s of %s in a group of %d: inside one domain vs split ", toString(o.coll),
              formatSize(double(o.bytes)).c_str(), o.group);
  for (std::size_t i = 0; i < o.split.size(); ++i) std::printf("%s%d", i ? "+" : "", o.split[i]);
  std::printf(" over %zu domains (the group alone on its links)\n", o.split.size());
  std::printf("| layout | algorithm | time | busbw | scale-out bytes | slowdown |\n|---|---|---:|---:|---:|---:|\n");
  double base = 0;
  const bool fits = o.group <= c.domainSize;
  for (int layout = fits ? 0 : 1; layout < 2; ++layout) {
    const Shape s = layout == 0 ? splitShape({o.group}) : splitShape(o.split);
    const Priced p = priceOne(withWindowFor(o, s), o.algo, o.bytes, s, c);
    if (!p.ok) fail(ErrorCode::InvalidArgument, p.why);
    if (layout == 0) base = p.result.seconds;
    std::ostringstream name;
    if (layout == 0)
      name << "one domain (" << o.group << ")";
    else {
      name << "split ";
      for (std::size_t i = 0; i < o.split.size(); ++i) name << (i ? "+" : "") << o.split[i];
    }
    char slow[32] = "1.00x";
    if (base > 0) std::snprintf(slow, sizeof(slow), "%.2fx", p.result.seconds / base);
    std::printf("| %s | %s | %s | %s | %s | %s |\n", name.str().c_str(), toString(p.plan.algorithm),
                duration(p.result.seconds).c_str(), gbps(busbw(p, s.size())).c_str(),
                formatSize(p.result.scaleOutBytes).c_str(), base > 0 ? slow : "-");
  }
}

int run(int argc, char** argv) {
  const auto start = std::chrono::steady_clock::now();
  bool help = false;
  const Options o = parseOptions(argc, argv, help);
  if (help) {
    std::fputs(usage(), stdout);
    return 0;
  }
  if (o.listPresets) {
    for (const Preset& p : presets())
      std::printf("%s: %s\n%s\n\n", p.name.c_str(), p.source.c_str(), p.cluster.describe().c_str());
    return 0;
  }
  const Cluster& c = o.cluster;
  std::printf("%s\n", c.describe().c_str());
  if (o.placement) {
    placement(o, c);
  } else {
    const Shape shape = c.shape();
    const Options sized = withWindowFor(o, shape);  // auto's window chosen once, not per size
    if (o.sweepMax > 0)
      sweep(sized, shape, c);
    else if (o.compare)
      printCompare(sized, shape, c);
    else {
      const Priced p = priceOne(sized, o.algo, o.bytes, shape, c);
      if (!p.ok) fail(ErrorCode::InvalidArgument, "--algo ", o.algo, ": ", p.why);
      printOne(sized, o.windowBytes == 0, p, shape, c);
    }
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(o.sweepMax > 0 && o.json.empty() ? stderr : stdout,
               "priced in %.3f s of wall time (shape, plans, pricing)\n", wall);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tiercc-sim: %s\n", e.what());
    return 2;
  }
}
