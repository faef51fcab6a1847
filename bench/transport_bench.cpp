// tiercc-transport-bench: perftest-style (ib_write_bw / ib_write_lat) bandwidth and latency of one
// tiercc scale-out Transport (ibverbs, ucx, tcp) between two ranks, over a sweep of sizes, with
// iwrite + inotify (--op write) or isend/irecv (--op send). See --help.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/transport/launch.hpp"
#include "bench/transport/options.hpp"
#include "bench/transport/pair_bench.hpp"
#include "core/params.hpp"
#include "bootstrap/store.hpp"
#include "transport/factory.hpp"

using namespace tiercc;
using namespace tiercc::tbench;

namespace {

struct LatencyStats {
  double min = 0, typical = 0, avg = 0, p99 = 0, max = 0;
};

// typical = the median, as perftest's t_typical.
LatencyStats latencyStats(std::vector<double> us) {
  LatencyStats s;
  if (us.empty()) return s;
  std::sort(us.begin(), us.end());
  double sum = 0;
  for (double v : us) sum += v;
  s.min = us.front();
  s.max = us.back();
  s.avg = sum / static_cast<double>(us.size());
  s.typical = us[us.size() / 2];
  s.p99 = us[std::min(us.size() - 1, us.size() * 99 / 100)];
  return s;
}

void printHeader(const Options& o, const std::string& transport) {
  std::string window = o.mode == Mode::Bandwidth ? "window " + std::to_string(std::min(o.window, o.iters)) + ", " : "";
  std::printf("# tiercc-transport-bench: transport %s, mode %s, op %s, 2 ranks, iters %d, warm-up %d, %s%s poll\n",
              transport.c_str(), modeName(o.mode), opName(o.op), o.iters, o.warmup, window.c_str(), pollName(o.poll));
  if (o.mode == Mode::Bandwidth) {
    std::printf("#%11s %10s %7s %14s %14s %14s\n", "bytes", "iterations", "window", "BW average", "BW average",
                "msg rate");
    std::printf("#%11s %10s %7s %14s %14s %14s\n", "(B)", "", "", "(MB/s)", "(Gbit/s)", "(Mmsg/s)");
  } else {
    std::printf("#%11s %10s %10s %10s %10s %10s %10s\n", "bytes", "iterations", "t_min", "t_typical", "t_avg", "t_p99",
                "t_max");
    std::printf("#%11s %10s %10s %10s %10s %10s %10s\n", "(B)", "", "(us)", "(us)", "(us)", "(us)", "(us)");
  }
}

void printRow(const Options& o, const std::string& transport, const Sample& s) {
  const char* common = "\"transport\":\"%s\",\"mode\":\"%s\",\"op\":\"%s\",\"bytes\":%zu,\"iterations\":%d";
  if (o.mode == Mode::Bandwidth) {
    double bytesPerS = static_cast<double>(s.bytes) * s.iters / s.seconds;
    double mbps = bytesPerS / 1e6, gbps = bytesPerS * 8 / 1e9, mmsg = s.iters / s.seconds / 1e6;
    if (o.json) {
      std::printf("{");
      std::printf(common, transport.c_str(), modeName(o.mode), opName(o.op), s.bytes, s.iters);
      // bw_local_MBps: to the last local completion, as perftest times it (for ibverbs the last
      // write's acknowledgement by the peer's RDMA device, not by the peer's process).
      std::printf(",\"window\":%d,\"seconds\":%.9g,\"bw_MBps\":%.6g,\"bw_Gbps\":%.6g,\"msg_rate_Mps\":%.6g,"
                  "\"local_seconds\":%.9g,\"bw_local_MBps\":%.6g}\n", s.window, s.seconds, mbps, gbps, mmsg,
                  s.localSeconds, static_cast<double>(s.bytes) * s.iters / s.localSeconds / 1e6);
    } else {
      std::printf(" %11zu %10d %7d %14.2f %14.4f %14.5f\n", s.bytes, s.iters, s.window, mbps, gbps, mmsg);
    }
  } else {
    LatencyStats l = latencyStats(s.oneWayUs);
    if (o.json) {
      std::printf("{");
      std::printf(common, transport.c_str(), modeName(o.mode), opName(o.op), s.bytes, s.iters);
      std::printf(",\"lat_min_us\":%.6g,\"lat_typical_us\":%.6g,\"lat_avg_us\":%.6g,\"lat_p99_us\":%.6g,"
                  "\"lat_max_us\":%.6g}\n", l.min, l.typical, l.avg, l.p99, l.max);
    } else {
      std::printf(" %11zu %10d %10.2f %10.2f %10.2f %10.2f %10.2f\n", s.bytes, s.iters, l.min, l.typical, l.avg, l.p99,
                  l.max);
    }
  }
  std::fflush(stdout);
}

void runRank(const Options& o, const std::string& transportName, int rank, std::shared_ptr<Store> store) {
  TransportSetup setup;
  setup.rank = rank;
  setup.worldSize = 2;
  setup.peers = {1 - rank};
  setup.peerName = [](int r) { return "rank " + std::to_string(r); };
  setup.deadline = Deadline::after(params::getDuration("TIERCC_TIMEOUT"));
  std::unique_ptr<Transport> transport = createTransport(transportName, *store, setup);
  PairBench bench(*transport, *store, rank, o);
  const bool print = rank == 0;
  if (print && !o.json) printHeader(o, transport->name());
  for (double bytes = static_cast<double>(o.minBytes); bytes <= static_cast<double>(o.maxBytes); bytes *= o.stepFactor) {
    Sample s = bench.run(static_cast<std::size_t>(bytes));
    if (print) printRow(o, transport->name(), s);
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  std::string transportName;
  try {
    bool help = false;
    o = parseOptions(argc, argv, help);
    if (help) {
      std::fputs(usage(), stdout);
      return 0;
    }
    transportName = o.transport.empty() ? defaultTransportName() : o.transport;
    if (auto why = transportUnavailable(transportName)) {
      std::fprintf(stderr, "tiercc-transport-bench: %s\n", why->c_str());
      return 2;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tiercc-transport-bench: %s\n%s", e.what(), usage());
    return 2;
  }
  return runTwoRanks(o.timeoutS, [&](int rank, std::shared_ptr<Store> store) { runRank(o, transportName, rank, store); });
}
