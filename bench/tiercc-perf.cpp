// tiercc-perf: nccl-tests-style sweeps of one collective over sizes, out of place and in place,
// with time, algbw, busbw (nccl-tests' factors) and #wrong, plus the bytes each tier carried
// per call (summed over ranks) against the slow-tier lower bound. Run it under tiercc-run.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <fstream>
#include <vector>

#include "bench/perf/options.hpp"
#include "bench/perf/runner.hpp"
#include "tiercc/tiercc.hpp"

using namespace tiercc;
using namespace tiercc::perf;

namespace {

// The send and receive buffers of the whole sweep, allocated once: ordinary memory, or
// symmetric memory from allocShared (collective, so every rank allocates the same sizes).
struct Buffers {
  Buffers(Communicator& c, bool symmetric, std::size_t sendBytes, std::size_t recvBytes) : comm(c), shared(symmetric) {
    if (shared) {
      send = static_cast<std::byte*>(comm.allocShared(sendBytes));
      recv = static_cast<std::byte*>(comm.allocShared(recvBytes));
    } else {
      ordinarySend.resize(sendBytes);
      ordinaryRecv.resize(recvBytes);
      send = ordinarySend.data();
      recv = ordinaryRecv.data();
    }
  }
  ~Buffers() {
    if (!shared) return;
    try {
      comm.freeShared(recv);
      comm.freeShared(send);
    } catch (const std::exception&) {  // the communicator failed; its destruction frees them
    }
  }
  Buffers(const Buffers&) = delete;
  Buffers& operator=(const Buffers&) = delete;
  Communicator& comm;
  bool shared;
  std::vector<std::byte> ordinarySend, ordinaryRecv;
  std::byte* send = nullptr;
  std::byte* recv = nullptr;
};

void printHeader(const Communicator& c, const Options& o) {
  std::printf("# tiercc-perf: %s, %d ranks = %d domains x %d, scale-out %s, type %s, op %s, root %d, iters %d, "
              "warmup %d, algo %s, %s buffers\n", collName(o.coll), c.size(), c.numDomains(), c.domainSize(),
              c.transportName().c_str(), toString(o.dt), toString(o.op), o.root, o.iters, o.warmup, o.algo.c_str(),
              o.symmetric ? "symmetric" : "ordinary");
  std::printf("# cost model: %s\n", c.tierModel().c_str());
  std::printf("#%11s %12s %6s %6s %5s  %9s %7s %7s %6s  %9s %7s %7s %6s  %13s %13s %13s  %-13s %s\n", "size", "count",
              "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong",
              "scale-up", "scale-out", "bound", "algorithm", "path");
  std::printf("#%11s %12s %6s %6s %5s  %9s %7s %7s %6s  %9s %7s %7s %6s  %13s %13s %13s\n", "(B)", "(elements)", "", "",
              "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "", "(B/call)", "(B/call)", "(B/call)");
}

void printRow(const Options& o, const Shape& s, const Result& oop, const Result& ip) {
  std::printf(" %11zu %12zu %6s %6s %5d  %9.1f %7.3f %7.3f %6llu  ", s.bytes, s.count, toString(o.dt), toString(o.op),
              o.root, oop.timeUs, oop.algbw, oop.busbw, static_cast<unsigned long long>(oop.wrong));
  if (ip.ran)
    std::printf("%9.1f %7.3f %7.3f %6llu  ", ip.timeUs, ip.algbw, ip.busbw, static_cast<unsigned long long>(ip.wrong));
  else
    std::printf("%9s %7s %7s %6s  ", "n/a", "", "", "");
  std::printf("%13.0f %13.0f %13.0f  %-13s %s\n", oop.scaleUpBytes, oop.scaleOutBytes, oop.boundBytes,
              oop.algorithm.c_str(), oop.path.c_str());
  std::fflush(stdout);
}

void appendJson(const Options& o, const Communicator& c, const Shape& s, const Result& oop, const Result& ip) {
  std::ofstream out(o.json, std::ios::app);
  out << "{\"coll\":\"" << collName(o.coll) << "\",\"ranks\":" << c.size() << ",\"domains\":" << c.numDomains()
      << ",\"algo\":\"" << oop.algorithm << "\",\"path\":\"" << oop.path << "\",\"asked\":\"" << o.algo
      << "\",\"buffers\":\"" << (o.symmetric ? "symmetric" : "ordinary") << "\",\"bytes\":" << s.bytes
      << ",\"count\":" << s.count << ",\"type\":\"" << toString(o.dt) << "\",\"op\":\"" << toString(o.op)
      << "\",\"oop_time_us\":" << oop.timeUs << ",\"oop_algbw\":" << oop.algbw << ",\"oop_busbw\":" << oop.busbw
      << ",\"oop_cpu_us\":" << oop.cpuUs << ",\"ip_time_us\":" << ip.timeUs << ",\"ip_algbw\":" << ip.algbw
      << ",\"ip_busbw\":" << ip.busbw << ",\"ip_cpu_us\":" << ip.cpuUs << ",\"wrong\":" << oop.wrong + ip.wrong
      << ",\"scaleup_bytes\":" << oop.scaleUpBytes << ",\"scaleout_bytes\":" << oop.scaleOutBytes
      << ",\"bound_bytes\":" << oop.boundBytes << "}\n";
}

}  // namespace

int main(int argc, char** argv) {
  try {
    bool help = false;
    Options o = parseOptions(argc, argv, help);
    if (help) {
      std::fputs(usage(), stdout);
      return 0;
    }
    // --algo NAME forces the algorithm of this collective, as TIERCC_ALGO=coll:NAME would.
    if (o.algo != "auto") setenv("TIERCC_ALGO", (std::string(collName(o.coll)) + ":" + o.algo).c_str(), 1);
    Communicator comm = Communicator::fromEnv();
    if (o.root >= comm.size()) {
      std::fprintf(stderr, "tiercc-perf: -r %d is not a rank of this %d-rank job\n", o.root, comm.size());
      return 2;
    }
    const bool print = comm.rank() == 0;
    if (print) printHeader(comm, o);
    if (print && !o.json.empty()) std::ofstream(o.json, std::ios::trunc);
    const Shape largest = shapeOf(o.coll, o.maxBytes, o.dt, comm.size());
    const std::size_t sendBytes = largest.sendElems * dataTypeSize(o.dt) + 64;
    const std::size_t recvBytes = largest.recvElems * dataTypeSize(o.dt) + 64;
    Buffers buffers(comm, o.symmetric, sendBytes, recvBytes);
    std::byte* send = buffers.send;
    std::byte* recv = buffers.recv;
    std::uint64_t totalWrong = 0;
    for (double bytes = static_cast<double>(o.minBytes); bytes <= static_cast<double>(o.maxBytes); bytes *= o.stepFactor) {
      Shape s = shapeOf(o.coll, static_cast<std::size_t>(bytes), o.dt, comm.size());
      Result oop = measure(comm, o, s, false, send, recv);
      Result ip = measure(comm, o, s, true, send, recv);
      totalWrong += oop.wrong + ip.wrong;
      if (print) printRow(o, s, oop, ip);
      if (print && !o.json.empty()) appendJson(o, comm, s, oop, ip);
    }
    if (print) std::printf("# Out of bounds values : %llu %s\n", static_cast<unsigned long long>(totalWrong), totalWrong ? "FAILED" : "OK");
    return totalWrong ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tiercc-perf: %s\n%s", e.what(), usage());
    return 2;
  }
}
