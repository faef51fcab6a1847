// Micro-benchmark of what every call pays the flight recorder: began() and ended() for one
// allreduce, with the ring (the default 64 entries) and without (TIERCC_FLIGHT_RECORDER=0: the
// progress only), the cycle-clock reads included, and the clock reads alone.
//
//   build/bin/bench_flight_recorder --benchmark_min_time=0.5
#include <benchmark/benchmark.h>

#include "core/cycle_clock.hpp"
#include "runtime/flight_recorder.hpp"

namespace {

void recordOneCall(benchmark::State& state) {
  tiercc::FlightRecorder recorder(static_cast<std::size_t>(state.range(0)));
  tiercc::CallArgs args;
  args.coll = tiercc::Collective::AllReduce;
  args.count = 2;
  std::uint64_t seq = 0;
  for (auto _ : state) {
    const std::uint64_t id = recorder.began(seq++, args, 0, tiercc::cycles::now());
    recorder.ended(id, true, tiercc::cycles::now());
  }
}
BENCHMARK(recordOneCall)->Arg(0)->Arg(64);

void twoClockReads(benchmark::State& state) {
  for (auto _ : state) {
    benchmark::DoNotOptimize(tiercc::cycles::now());
    benchmark::DoNotOptimize(tiercc::cycles::now());
  }
}
BENCHMARK(twoClockReads);

}  // namespace

BENCHMARK_MAIN();
