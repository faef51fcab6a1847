// tiercc-transport-bench's command line, after perftest (ib_write_bw / ib_write_lat): the
// transport, bw or lat, write (iwrite + inotify) or send (isend/irecv), sizes -b/-e/-f, -n, -t.
#pragma once

#include <cstddef>
#include <string>

namespace tiercc::tbench {

enum class Mode { Bandwidth, Latency };
enum class Op { Write, Send };
enum class Poll { Spin, Block };

struct Options {
  std::string transport;  ///< empty: the default transport (TIERCC_TRANSPORT or the first that works)
  Mode mode = Mode::Bandwidth;
  Op op = Op::Write;
  std::size_t minBytes = 2, maxBytes = 8u << 20;
  double stepFactor = 2;
  int iters = 1000;
  int warmup = -1;  ///< -1: iters / 10, at least 1
  int window = 64;  ///< bw: operations in flight (perftest's -t); capped at iters
  Poll poll = Poll::Spin;
  bool json = false;
  int timeoutS = 600;  ///< the whole self-launched job
};

/// Parses argv; InvalidArgument naming the bad option. `--help` sets help.
Options parseOptions(int argc, char** argv, bool& help);
const char* usage();
const char* modeName(Mode m);
const char* opName(Op o);
const char* pollName(Poll p);

}  // namespace tiercc::tbench
