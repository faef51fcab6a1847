// Command-line parsing for tiercc-transport-bench (see options.hpp).
#include "bench/transport/options.hpp"

#include <algorithm>
#include <cstdlib>

#include "bench/perf/options.hpp"
#include "core/errors.hpp"

namespace tiercc::tbench {
using perf::parseInt;

const char* modeName(Mode m) { return m == Mode::Bandwidth ? "bw" : "lat"; }
const char* opName(Op o) { return o == Op::Write ? "write" : "send"; }
const char* pollName(Poll p) { return p == Poll::Spin ? "spin" : "block"; }

const char* usage() {
  return "usage: tiercc-transport-bench [--transport ibverbs|ucx|tcp] [--mode bw|lat] [--op write|send]\n"
         "                              [-b minbytes] [-e maxbytes] [-f stepfactor] [-n iters] [-w warmup]\n"
         "                              [-t window] [--poll spin|block] [--json] [--timeout seconds]\n"
         "Two ranks, like perftest's ib_write_bw / ib_write_lat, over one tiercc scale-out Transport.\n"
         "  --op write: iwrite + inotify into the peer's registered memory; --op send: isend/irecv.\n"
         "  --mode bw: rank 0 keeps -t operations in flight (default 64, at most -n); the time runs from\n"
         "    the peer's go to its acknowledgement of the last message (--json adds bw_local_MBps: to the\n"
         "    last local completion, as perftest times it). --mode lat: ping-pong, one-way\n"
         "    latency = round trip / 2, per iteration.\n"
         "  --poll spin (default, as perftest): Transport::test in a loop; block: Transport::wait.\n"
         "  Sizes in bytes, K/M/G = powers of 1024 (default -b 2 -e 8M -f 2, as perftest's -a).\n"
         "  BW in MB/s = 10^6 bytes/s and Gbit/s = 10^9 bits/s. --json: one JSON object per size.\n"
         "Starts its own two ranks (fork + an in-process TCP store), or joins a job when\n"
         "TIERCC_STORE/TIERCC_RANK/TIERCC_WORLD_SIZE=2 are set (tiercc-run -n 2 tiercc-transport-bench).\n";
}

Options parseOptions(int argc, char** argv, bool& help) {
  Options o;
  help = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      help = true;
      return o;
    }
    if (a == "--json") {
      o.json = true;
      continue;
    }
    if (i + 1 >= argc) fail(ErrorCode::InvalidArgument, a, ": missing value (or unknown option)");
    std::string v = argv[++i];
    if (a == "--transport") o.transport = v;
    else if (a == "--mode") {
      TIERCC_REQUIRE_ARG(v == "bw" || v == "lat", "--mode ", v, ": expected bw or lat");
      o.mode = v == "bw" ? Mode::Bandwidth : Mode::Latency;
    } else if (a == "--op") {
      TIERCC_REQUIRE_ARG(v == "write" || v == "send", "--op ", v, ": expected write or send");
      o.op = v == "write" ? Op::Write : Op::Send;
    } else if (a == "--poll") {
      TIERCC_REQUIRE_ARG(v == "spin" || v == "block", "--poll ", v, ": expected spin or block");
      o.poll = v == "spin" ? Poll::Spin : Poll::Block;
    } else if (a == "-b" || a == "--minbytes") o.minBytes = perf::parseSize(v, a);
    else if (a == "-e" || a == "--maxbytes") o.maxBytes = perf::parseSize(v, a);
    else if (a == "-f" || a == "--stepfactor") {
      o.stepFactor = std::strtod(v.c_str(), nullptr);
      TIERCC_REQUIRE_ARG(o.stepFactor > 1, "-f ", v, ": the step factor must be > 1");
    } else if (a == "-n" || a == "--iters") o.iters = parseInt(v, a, 1);
    else if (a == "-w" || a == "--warmup") o.warmup = parseInt(v, a, 0);
    else if (a == "-t" || a == "--window") o.window = parseInt(v, a, 1);
    else if (a == "--timeout") o.timeoutS = parseInt(v, a, 1);
    else fail(ErrorCode::InvalidArgument, "unknown option ", a);
  }
  TIERCC_REQUIRE_ARG(o.minBytes >= 1, "-b must be at least 1 byte");
  TIERCC_REQUIRE_ARG(o.minBytes <= o.maxBytes, "-b is larger than -e");
  TIERCC_REQUIRE_ARG(o.maxBytes <= (std::size_t(1) << 30), "-e is larger than 1G");
  if (o.warmup < 0) o.warmup = std::max(1, o.iters / 10);
  return o;
}

}  // namespace tiercc::tbench
