// Micro-benchmark of the reduction kernel: reduceInto(Sum) for f32, bf16 and i32 at sizes from
// L1-resident (4 KiB) through L2 (256 KiB) to memory-bound (16 MiB). Bytes processed counts the
// dst and src buffers read plus dst written, i.e. 3 x size per call.
#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/reduce.hpp"
#include "tiercc/types.hpp"

namespace {

using tiercc::DataType;

template <typename T>
void benchReduceSum(benchmark::State& state, DataType dt, T initDst, T initSrc) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  const std::size_t count = bytes / sizeof(T);
  std::vector<T> dst(count, initDst);
  std::vector<T> src(count, initSrc);
  for (auto _ : state) {
    tiercc::reduceInto(dst.data(), src.data(), count, dt, tiercc::ReduceOp::Sum);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * 3 *
                          static_cast<std::int64_t>(bytes));
}

// Values chosen so repeated summing never reaches Inf/NaN or denormals, which would change speed.
void bmF32(benchmark::State& state) { benchReduceSum<float>(state, DataType::F32, 1.0f, 0.0f); }
void bmBf16(benchmark::State& state) { benchReduceSum<std::uint16_t>(state, DataType::BF16, 0x3f80, 0x0000); }
void bmI32(benchmark::State& state) { benchReduceSum<std::int32_t>(state, DataType::I32, 1, 3); }

constexpr std::int64_t kKiB = 1024;

void bufferSizes(benchmark::internal::Benchmark* b) {
  for (std::int64_t bytes : {4 * kKiB, 256 * kKiB, 16 * kKiB * kKiB}) b->Arg(bytes);
}

BENCHMARK(bmF32)->Apply(bufferSizes);
BENCHMARK(bmBf16)->Apply(bufferSizes);
BENCHMARK(bmI32)->Apply(bufferSizes);

}  // namespace

BENCHMARK_MAIN();
