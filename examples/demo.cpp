// The quick-start demo: run under `tiercc-run -n 8 --domain-size 4`, one machine emulating a
// cluster of 2 domains x 4 ranks. Runs every collective on real data,
// checks the results, and prints per collective and size: time, busbw, and the bytes that
// crossed each tier (summed over all ranks) against the slow-tier lower bound.
#include <chrono>
#include <cinttypes>
#include <algorithm>
#include <cstdio>
#include <functional>
#include <vector>

#include "tiercc/tiercc.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Totals {
  double scaleUp = 0, scaleOut = 0, bound = 0;
};

// This rank's tier statistics now; jobTotals() sums the difference of two snapshots over all
// ranks, so that the table shows the whole job's traffic for exactly the calls between them.
tiercc::TierStats snapshot(tiercc::Communicator& comm) { return comm.stats(); }

Totals jobTotals(tiercc::Communicator& comm, const tiercc::TierStats& before, const tiercc::TierStats& after) {
  std::uint64_t mine[3] = {after.scaleUpBytes - before.scaleUpBytes, after.scaleOutBytes - before.scaleOutBytes,
                           after.scaleOutBoundBytes - before.scaleOutBoundBytes}, all[3];
  comm.allreduce(mine, all, 3, tiercc::DataType::U64, tiercc::ReduceOp::Sum);
  return {double(all[0]), double(all[1]), double(all[2])};
}

// Fills rank r's input so that the expected sum is known exactly: x[i] = r + (i % 7).
bool runAllreduce(tiercc::Communicator& comm, std::size_t count, int iters, bool print) {
  const int n = comm.size();
  std::vector<float> in(count), out(count);
  for (std::size_t i = 0; i < count; ++i) in[i] = float(comm.rank() + int(i % 7));
  comm.allreduce(in.data(), out.data(), count, tiercc::DataType::F32, tiercc::ReduceOp::Sum);  // warm-up
  comm.barrier();
  tiercc::TierStats before = snapshot(comm);
  auto start = Clock::now();
  for (int it = 0; it < iters; ++it)
    comm.allreduce(in.data(), out.data(), count, tiercc::DataType::F32, tiercc::ReduceOp::Sum);
  double seconds = std::chrono::duration<double>(Clock::now() - start).count() / iters;
  Totals moved = jobTotals(comm, before, snapshot(comm));
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
    std::printf("  %-14s %12zu %10.1f %8.3f %8.3f %14.0f %14.0f %14.0f %6zu\n", "allreduce", count * sizeof(float),
                seconds * 1e6, algbw, busbw, moved.scaleUp / iters,
                moved.scaleOut / iters, moved.bound / iters, allWrong);
  }
  return allWrong == 0;
}

bool runBarrier(tiercc::Communicator& comm, int iters, bool print) {
  comm.barrier();
  auto start = Clock::now();
  for (int it = 0; it < iters; ++it) comm.barrier();
  double seconds = std::chrono::duration<double>(Clock::now() - start).count() / iters;
  if (print) std::printf("  %-14s %12d %10.1f %8s %8s %14s %14s %14s %6d\n", "barrier", 0, seconds * 1e6, "-", "-", "-", "-", "-", 0);
  return true;
}

// The other collectives on 1 MiB per rank, each checked, with the same columns as allreduce.
// busbw factors follow nccl-tests: (n-1)/n for allgather, reduce-scatter, all-to-all; 1 else.
bool runOthers(tiercc::Communicator& comm, bool print) {
  const int n = comm.size(), me = comm.rank();
  const std::size_t count = 256 << 10;  // f32 elements: 1 MiB
  std::vector<float> in(count * n), out(count * n);
  auto fill = [&](int r, std::size_t i) { return float((r * 31 + int(i % 97)) % 1000); };
  struct Case {
    const char* name;
    double bytes, factor;
    std::function<void()> run;
    std::function<bool()> check;
  };
  const Case cases[] = {
      {"broadcast", double(count) * 4, 1.0,
       [&] { comm.broadcast(in.data(), out.data(), count, tiercc::DataType::F32, n - 1); },
       [&] { for (std::size_t i = 0; i < count; ++i) if (out[i] != fill(n - 1, i)) return false; return true; }},
      {"reduce", double(count) * 4, 1.0,
       [&] { comm.reduce(in.data(), out.data(), count, tiercc::DataType::F32, tiercc::ReduceOp::Max, 0); },
       [&] { if (me != 0) return true;
             for (std::size_t i = 0; i < count; ++i) { float m = 0; for (int r = 0; r < n; ++r) m = std::max(m, fill(r, i));
               if (out[i] != m) return false; } return true; }},
      {"allgather", double(count) * 4 * n, (n - 1.0) / n,
       [&] { comm.allgather(in.data(), out.data(), count, tiercc::DataType::F32); },
       [&] { for (int r = 0; r < n; ++r) for (std::size_t i = 0; i < count; ++i) if (out[r * count + i] != fill(r, i)) return false; return true; }},
      {"reduce_scatter", double(count) * 4 * n, (n - 1.0) / n,
       [&] { comm.reduceScatter(in.data(), out.data(), count, tiercc::DataType::F32, tiercc::ReduceOp::Max); },
       [&] { for (std::size_t i = 0; i < count; ++i) { float m = 0; for (int r = 0; r < n; ++r) m = std::max(m, fill(r, me * count + i));
               if (out[i] != m) return false; } return true; }},
      {"alltoall", double(count) * 4 * n, (n - 1.0) / n,
       [&] { comm.alltoall(in.data(), out.data(), count, tiercc::DataType::F32); },
       [&] { for (int r = 0; r < n; ++r) for (std::size_t i = 0; i < count; ++i) if (out[r * count + i] != fill(r, me * count + i)) return false; return true; }},
  };
  bool ok = true;
  for (const Case& c : cases) {
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = fill(me, i);
    comm.barrier();
    tiercc::TierStats before = snapshot(comm);
    auto start = Clock::now();
    c.run();
    double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    Totals moved = jobTotals(comm, before, snapshot(comm));
    std::uint64_t wrong = c.check() ? 0 : 1, allWrong = 0;
    comm.allreduce(&wrong, &allWrong, 1, tiercc::DataType::U64, tiercc::ReduceOp::Sum);
    ok &= allWrong == 0;
    if (print) {
      double algbw = c.bytes / seconds / 1e9;
      std::printf("  %-14s %12.0f %10.1f %8.3f %8.3f %14.0f %14.0f %14.0f %6llu\n", c.name, c.bytes, seconds * 1e6,
                  algbw, algbw * c.factor, moved.scaleUp, moved.scaleOut, moved.bound,
                  static_cast<unsigned long long>(allWrong));
    }
  }
  return ok;
}

}  // namespace

int main() {
  try {
    tiercc::Communicator comm = tiercc::Communicator::fromEnv();
    const bool print = comm.rank() == 0;
    if (print) {
      std::printf("tiercc demo: %d ranks = %d domains x %d ranks (scale-up: %s; scale-out: %s)\n", comm.size(),
                  comm.numDomains(), comm.domainSize(), comm.scaleUpName().c_str(), comm.transportName().c_str());
      std::printf("  %-14s %12s %10s %8s %8s %14s %14s %14s %6s\n", "collective", "bytes", "time(us)", "algbw",
                  "busbw", "scale-up B", "scale-out B", "out bound B", "#wrong");
    }
    bool ok = true;
    for (std::size_t count : {std::size_t(1024), std::size_t(256) << 10, std::size_t(4) << 20})
      ok &= runAllreduce(comm, count, count > (1u << 20) ? 3 : 10, print);
    ok &= runBarrier(comm, 20, print);
    ok &= runOthers(comm, print);
    if (print) {
      std::printf("(GB/s = 1e9 bytes/s; bytes per call summed over all ranks; out bound = the slow-tier lower bound for the same work)\n");
      std::printf("%s\n", ok ? "demo: all results correct" : "demo: WRONG RESULTS");
    }
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "demo failed: %s\n", e.what());
    return 1;
  }
}
