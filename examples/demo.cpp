// The quick-start demo: run under `tiercc-run -n 8 --domain-size 4`, one machine emulating a
// cluster of 2 domains x 4 ranks. Runs each collective this build supports on real data,
// checks the results, and prints per collective and size: time, busbw, and the bytes that
// crossed each tier (summed over all ranks) against the slow-tier lower bound.
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <vector>

#include "tiercc/tiercc.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Totals {
  double scaleUp = 0, scaleOut = 0, bound = 0;
};

// Sums every rank's tier statistics, so the table shows the whole job's traffic.
Totals jobTotals(tiercc::Communicator& comm) {
  tiercc::TierStats s = comm.stats();
  std::uint64_t mine[3] = {s.scaleUpBytes, s.scaleOutBytes, s.scaleOutBoundBytes}, all[3];
  comm.allreduce(mine, all, 3, tiercc::DataType::U64, tiercc::ReduceOp::Sum);
  return {double(all[0]), double(all[1]), double(all[2])};
}

// Fills rank r's input so that the expected sum is known exactly: x[i] = r + (i % 7).
bool runAllreduce(tiercc::Communicator& comm, std::size_t count, int iters, bool print) {
  const int n = comm.size();
  std::vector<float> in(count), out(count);
  for (std::size_t i = 0; i < count; ++i) in[i] = float(comm.rank() + int(i % 7));
  comm.allreduce(in.data(), out.data(), count, tiercc::DataType::F32, tiercc::ReduceOp::Sum);  // warm-up
  Totals before = jobTotals(comm);
  comm.barrier();
  auto start = Clock::now();
  for (int it = 0; it < iters; ++it)
    comm.allreduce(in.data(), out.data(), count, tiercc::DataType::F32, tiercc::ReduceOp::Sum);
  double seconds = std::chrono::duration<double>(Clock::now() - start).count() / iters;
  Totals after = jobTotals(comm);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < count; ++i) {
    float expect = float(n * (n - 1) / 2 + n * int(i % 7));
    wrong += out[i] != expect;
  }
  std::size_t allWrong = 0;
  comm.allreduce(&wrong, &allWrong, 1, tiercc::DataType::U64, tiercc::ReduceOp::Sum);
  if (print) {
    double bytes = double(count) * sizeof(float);
    double algbw = bytes / seconds / 1e9, busbw = algbw * 2.0 * (n - 1) / n;
    std::printf("  %-10s %12zu %10.1f %8.3f %8.3f %14.0f %14.0f %14.0f %6zu\n", "allreduce", count * sizeof(float),
                seconds * 1e6, algbw, busbw, (after.scaleUp - before.scaleUp) / iters,
                (after.scaleOut - before.scaleOut) / iters, (after.bound - before.bound) / iters, allWrong);
  }
  return allWrong == 0;
}

bool runBarrier(tiercc::Communicator& comm, int iters, bool print) {
  comm.barrier();
  auto start = Clock::now();
  for (int it = 0; it < iters; ++it) comm.barrier();
  double seconds = std::chrono::duration<double>(Clock::now() - start).count() / iters;
  if (print) std::printf("  %-10s %12d %10.1f %8s %8s %14s %14s %14s %6d\n", "barrier", 0, seconds * 1e6, "-", "-", "-", "-", "-", 0);
  return true;
}

// Collectives this build does not have yet must say so, never return a wrong answer.
void reportUnsupported(tiercc::Communicator& comm, bool print) {
  std::vector<float> a(comm.size()), b(comm.size());
  struct Probe { const char* name; void (*run)(tiercc::Communicator&, float*, float*); };
  const Probe probes[] = {
      {"broadcast", [](tiercc::Communicator& c, float* x, float* y) { c.broadcast(x, y, 1, tiercc::DataType::F32, 0); }},
      {"allgather", [](tiercc::Communicator& c, float* x, float* y) { c.allgather(x, y, 1, tiercc::DataType::F32); }},
      {"reduce_scatter", [](tiercc::Communicator& c, float* x, float* y) { c.reduceScatter(x, y, 1, tiercc::DataType::F32, tiercc::ReduceOp::Sum); }},
      {"reduce", [](tiercc::Communicator& c, float* x, float* y) { c.reduce(x, y, 1, tiercc::DataType::F32, tiercc::ReduceOp::Sum, 0); }},
      {"alltoall", [](tiercc::Communicator& c, float* x, float* y) { c.alltoall(x, y, 1, tiercc::DataType::F32); }},
  };
  for (const Probe& p : probes) {
    try {
      p.run(comm, a.data(), b.data());
    } catch (const tiercc::Error& e) {
      if (e.code() != tiercc::ErrorCode::NotSupported) throw;
      if (print) std::printf("  %-10s not supported yet in this build\n", p.name);
    }
  }
}

}  // namespace

int main() {
  try {
    tiercc::Communicator comm = tiercc::Communicator::fromEnv();
    const bool print = comm.rank() == 0;
    if (print) {
      std::printf("tiercc demo: %d ranks = %d domains x %d ranks (scale-up: shared memory; scale-out: TCP)\n",
                  comm.size(), comm.numDomains(), comm.domainSize());
      std::printf("  %-10s %12s %10s %8s %8s %14s %14s %14s %6s\n", "collective", "bytes", "time(us)", "algbw",
                  "busbw", "scale-up B", "scale-out B", "out bound B", "#wrong");
    }
    bool ok = true;
    for (std::size_t count : {std::size_t(1024), std::size_t(256) << 10, std::size_t(4) << 20})
      ok &= runAllreduce(comm, count, count > (1u << 20) ? 3 : 10, print);
    ok &= runBarrier(comm, 20, print);
    reportUnsupported(comm, print);
    if (print) {
      std::printf("(GB/s = 1e9 bytes/s; bytes per call summed over all ranks; out bound = 2(D-1)/D x S per domain)\n");
      std::printf("%s\n", ok ? "demo: all results correct" : "demo: WRONG RESULTS");
    }
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "demo failed: %s\n", e.what());
    return 1;
  }
}
