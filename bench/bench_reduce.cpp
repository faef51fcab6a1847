// Micro-benchmark of the reduction kernels: reduceInto(Sum) for f32, bf16, f16, i32, once per
// kernel ISA (generic, avx2, avx512; one this CPU lacks is reported as skipped), at sizes from
// L1-resident (4 KiB) through L2 (64 KiB) to memory-bound (16 MiB). Bytes processed counts the
// dst and src buffers read plus dst written, i.e. 3 x size per call. Names read
// reduce_sum/<type>/<isa>/<bytes>.
//
//   build-isa/bin/bench_reduce --benchmark_min_time=0.2
//   build-isa/bin/bench_reduce --benchmark_filter='/(f32|bf16)/.*/(65536|16777216)$'
#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/reduce.hpp"
#include "core/reduce_isa.hpp"
#include "tiercc/types.hpp"

namespace {

using tiercc::DataType;

template <typename T>
void benchReduceSum(benchmark::State& state, const std::string& isa, DataType dt, T initDst, T initSrc) {
  if (!tiercc::reduceIsaSupported(isa)) {
    state.SkipWithError(("this CPU cannot run the " + isa + " kernels").c_str());
    return;
  }
  tiercc::setReduceIsaForTesting(isa);
  const auto bytes = static_cast<std::size_t>(state.range(0));
  const std::size_t count = bytes / sizeof(T);
  std::vector<T> dst(count, initDst);
  std::vector<T> src(count, initSrc);
  for (auto _ : state) {
    tiercc::reduceInto(dst.data(), src.data(), count, dt, tiercc::ReduceOp::Sum);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * 3 * static_cast<std::int64_t>(bytes));
}

constexpr std::int64_t kKiB = 1024;

template <typename Fn>
void add(const std::string& name, Fn fn) {
  auto* b = benchmark::RegisterBenchmark(name.c_str(), fn);
  for (std::int64_t bytes : {4 * kKiB, 64 * kKiB, 16 * kKiB * kKiB}) b->Arg(bytes);
}

// One benchmark per type x ISA, the ISA in the name so results line up per ISA.
void registerAll() {
  for (const std::string& isa : tiercc::reduceIsaNames()) {
    // Values chosen so repeated summing never reaches Inf/NaN or subnormals, which would change speed.
    add("reduce_sum/f32/" + isa,
        [isa](benchmark::State& s) { benchReduceSum<float>(s, isa, DataType::F32, 1.0f, 0.0f); });
    add("reduce_sum/bf16/" + isa,
        [isa](benchmark::State& s) { benchReduceSum<std::uint16_t>(s, isa, DataType::BF16, 0x3f80, 0x0000); });
    add("reduce_sum/f16/" + isa,
        [isa](benchmark::State& s) { benchReduceSum<std::uint16_t>(s, isa, DataType::F16, 0x3c00, 0x0000); });
    add("reduce_sum/i32/" + isa,
        [isa](benchmark::State& s) { benchReduceSum<std::int32_t>(s, isa, DataType::I32, 1, 3); });
  }
}

}  // namespace

int main(int argc, char** argv) {
  registerAll();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
