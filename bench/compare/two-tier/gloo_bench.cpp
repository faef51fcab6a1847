// gloo_bench: the Gloo side of bench/compare/two-tier.sh. One process per rank, started by the
// script inside its domain's network namespace; times f32 sum allreduce or f32 all-to-all with
// Gloo's TCP transport, bound to the rank's rail address, over a list of sizes, and writes one
// JSON line per size in mpi_coll_bench.c's format (so that one parser reads both). Gloo's classic
// allreduce algorithms reduce in place (the buffer is input and output), so that busbw is
// in-place; gloo::alltoall has separate input and output buffers (out of place).
// Sizes and busbw follow nccl-tests, as mpi_coll_bench and tiercc-perf do: allreduce = buffer
// per rank, busbw = algbw x 2(n-1)/n; alltoall = total bytes sent per rank (S/n to each peer),
// busbw = algbw x (n-1)/n. oop_cpu_us: the CPU time (user and system, getrusage) of one call,
// every rank's added up.
//
// usage: gloo_bench --rank R --size N --addr IP --store DIR --sizes B1,B2,... [--iters N]
//                   [--warmup W] [--coll allreduce|alltoall]
//                   [--algo halving_doubling|ring_chunked] [--json FILE]
// Rendezvous: gloo's FileStore in DIR (the namespaces share the file system).
#include <gloo/allreduce_halving_doubling.h>
#include <gloo/allreduce_ring.h>
#include <gloo/allreduce_ring_chunked.h>
#include <gloo/alltoall.h>
#include <gloo/barrier_all_to_all.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Options {
  int rank = -1;
  int size = 0;
  std::string addr;
  std::string store;
  std::vector<size_t> sizes;
  int iters = 20;
  int warmup = 3;
  std::string coll = "allreduce";
  std::string algo = "halving_doubling";
  std::string json;
};

[[noreturn]] void usage() {
  std::fprintf(stderr,
               "usage: gloo_bench --rank R --size N --addr IP --store DIR --sizes B1,B2,...\n"
               "                  [--iters N] [--warmup W] [--coll allreduce|alltoall]\n"
               "                  [--algo halving_doubling|ring_chunked] [--json FILE]\n");
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string key = argv[i], val = argv[i + 1];
    if (key == "--rank") o.rank = std::atoi(val.c_str());
    else if (key == "--size") o.size = std::atoi(val.c_str());
    else if (key == "--addr") o.addr = val;
    else if (key == "--store") o.store = val;
    else if (key == "--iters") o.iters = std::atoi(val.c_str());
    else if (key == "--warmup") o.warmup = std::atoi(val.c_str());
    else if (key == "--coll") o.coll = val;
    else if (key == "--algo") o.algo = val;
    else if (key == "--json") o.json = val;
    else if (key == "--sizes") {
      std::stringstream list(val);
      for (std::string item; std::getline(list, item, ',');) o.sizes.push_back(std::stoull(item));
    } else usage();
  }
  if (argc % 2 != 1 || o.rank < 0 || o.size < 1 || o.rank >= o.size || o.addr.empty() ||
      o.store.empty() || o.sizes.empty() || o.iters < 1 || o.warmup < 0 ||
      (o.algo != "halving_doubling" && o.algo != "ring_chunked") ||
      (o.coll != "allreduce" && o.coll != "alltoall"))
    usage();
  return o;
}

std::unique_ptr<gloo::Algorithm> makeAllreduce(const Options& o,
                                               const std::shared_ptr<gloo::Context>& ctx,
                                               float* data, int count) {
  std::vector<float*> ptrs{data};
  if (o.algo == "ring_chunked")
    return std::make_unique<gloo::AllreduceRingChunked<float>>(ctx, ptrs, count);
  return std::make_unique<gloo::AllreduceHalvingDoubling<float>>(ctx, ptrs, count);
}

// One collective at one size: how to fill its input, run it once, count wrong output elements,
// and prepare the timed calls. bytes is nccl-tests' size column (rounded down to whole blocks).
struct Case {
  size_t bytes = 0;
  double busFactor = 1;
  std::function<void()> fill, run, beforeTiming;
  std::function<long long()> wrong;
};

// Small integers only, so that float sums stay exact and any wrong element shows (as in
// mpi_coll_bench.c).
float allreduceInput(int rank, size_t i) { return float(rank + 1 + int(i % 13)); }
float alltoallInput(int from, int to, size_t i) {
  return float((size_t(from) * 31 + size_t(to) * 17 + i) % 4093);
}

Case allreduceCase(const Options& o, const std::shared_ptr<gloo::Context>& ctx, float* data,
                   size_t bytes) {
  const size_t count = bytes / sizeof(float);
  const int n = o.size, rank = o.rank;
  std::shared_ptr<gloo::Algorithm> algo = makeAllreduce(o, ctx, data, int(count));
  Case c;
  c.bytes = count * sizeof(float);
  c.busFactor = 2.0 * (n - 1) / n;
  c.fill = [=] { for (size_t i = 0; i < count; i++) data[i] = allreduceInput(rank, i); };
  c.run = [algo] { algo->run(); };
  c.wrong = [=] {
    long long wrong = 0;
    for (size_t i = 0; i < count; i++)
      wrong += data[i] != float(n * (n + 1) / 2 + n * int(i % 13));
    return wrong;
  };
  // In place, the values grow every call; start the timed calls from small ones again.
  c.beforeTiming = [=] { for (size_t i = 0; i < count; i++) data[i] = 1.0f / float(n); };
  return c;
}

Case alltoallCase(const Options& o, const std::shared_ptr<gloo::Context>& ctx, float* send,
                  float* recv, size_t bytes) {
  const int n = o.size, rank = o.rank;
  const size_t block = bytes / sizeof(float) / size_t(n);  // elements to each peer
  auto opts = std::make_shared<gloo::AlltoallOptions>(ctx);
  opts->setInput(send, block * n);
  opts->setOutput(recv, block * n);
  Case c;
  c.bytes = block * n * sizeof(float);
  c.busFactor = double(n - 1) / n;
  c.fill = [=] {
    for (int to = 0; to < n; to++)
      for (size_t i = 0; i < block; i++) send[to * block + i] = alltoallInput(rank, to, i);
    std::fill(recv, recv + block * n, -1.0f);  // a block never received shows as wrong
  };
  c.run = [opts] { gloo::alltoall(*opts); };
  c.wrong = [=] {
    long long wrong = 0;
    for (int from = 0; from < n; from++)
      for (size_t i = 0; i < block; i++) wrong += recv[from * block + i] != alltoallInput(from, rank, i);
    return wrong;
  };
  c.beforeTiming = [] {};  // out of place: the input stays as it was
  return c;
}

// The slowest rank's value, so that the reported time is the job's, as in mpi_coll_bench.
double slowest(const std::shared_ptr<gloo::Context>& ctx, double value) {
  std::vector<double*> ptrs{&value};
  gloo::AllreduceRing<double> max(ctx, ptrs, 1, gloo::ReductionFunction<double>::max);
  max.run();
  return value;
}

// Every rank's value added up: the CPU time the job spent.
double summed(const std::shared_ptr<gloo::Context>& ctx, double value) {
  std::vector<double*> ptrs{&value};
  gloo::AllreduceRing<double> sum(ctx, ptrs, 1, gloo::ReductionFunction<double>::sum);
  sum.run();
  return value;
}

// User and system CPU seconds of this process so far, all its threads (getrusage).
double cpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);

  gloo::transport::tcp::attr attr;
  attr.hostname = o.addr;  // listen on (and be reached at) this rank's rail address
  auto device = gloo::transport::tcp::CreateDevice(attr);
  gloo::rendezvous::FileStore fileStore(o.store);
  gloo::rendezvous::PrefixStore store("gloo_bench", fileStore);
  auto context = std::make_shared<gloo::rendezvous::Context>(o.rank, o.size);
  context->setTimeout(std::chrono::seconds(120));
  context->connectFullMesh(store, device);

  size_t largest = 0;
  for (size_t bytes : o.sizes) largest = std::max(largest, bytes);
  const bool alltoall = o.coll == "alltoall";
  std::vector<float> buffer(largest / sizeof(float) + 1);
  std::vector<float> output(alltoall ? buffer.size() : 0);
  gloo::BarrierAllToAll barrier(context);
  const std::string algo = alltoall ? "gloo::alltoall" : o.algo;

  FILE* json = nullptr;
  if (o.rank == 0) {
    std::printf("# gloo_bench %s (%s, %s)  nranks %d  iters %d  warmup %d\n", o.coll.c_str(),
                algo.c_str(), alltoall ? "out of place" : "in place", o.size, o.iters, o.warmup);
    std::printf("#%11s  %10s  %7s  %7s  %6s\n", "size (B)", "time (us)", "algbw", "busbw", "#wrong");
    if (!o.json.empty() && (json = std::fopen(o.json.c_str(), "w")) == nullptr) {
      std::perror(o.json.c_str());
      return 1;
    }
  }
  long long totalWrong = 0;
  for (size_t bytes : o.sizes) {
    Case c = alltoall ? alltoallCase(o, context, buffer.data(), output.data(), bytes)
                      : allreduceCase(o, context, buffer.data(), bytes);
    if (c.bytes == 0) continue;

    c.fill();  // check once
    c.run();
    long long wrong = c.wrong();
    totalWrong += wrong;

    c.beforeTiming();
    for (int i = 0; i < o.warmup; i++) c.run();
    barrier.run();
    const double cpuStart = cpuSeconds();
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < o.iters; i++) c.run();
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / o.iters;
    const double cpu = summed(context, (cpuSeconds() - cpuStart) / o.iters);
    seconds = slowest(context, seconds);
    if (o.rank == 0) {
      double algbw = double(c.bytes) / seconds / 1e9;
      double busbw = algbw * c.busFactor;
      std::printf("%12zu  %10.2f  %7.3f  %7.3f  %6lld\n", c.bytes, seconds * 1e6, algbw, busbw,
                  wrong);
      std::fflush(stdout);
      if (json != nullptr)
        std::fprintf(json,
                     "{\"coll\":\"%s\",\"bytes\":%zu,\"count\":%zu,\"type\":\"f32\","
                     "\"ranks\":%d,\"iters\":%d,\"oop_time_us\":%.3f,\"oop_algbw\":%.6g,"
                     "\"oop_busbw\":%.6g,\"oop_cpu_us\":%.3f,\"in_place\":%s,\"algo\":\"%s\","
                     "\"wrong\":%lld}\n",
                     o.coll.c_str(), c.bytes, c.bytes / sizeof(float) / (alltoall ? o.size : 1), o.size, o.iters,
                     seconds * 1e6, algbw, busbw, cpu * 1e6, alltoall ? "false" : "true", algo.c_str(), wrong);
    }
  }
  if (json != nullptr) std::fclose(json);
  barrier.run();
  if (o.rank == 0) std::printf("# total #wrong (rank 0): %lld\n", totalWrong);
  return totalWrong == 0 ? 0 : 1;
}
