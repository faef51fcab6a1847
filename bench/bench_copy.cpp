// Micro-benchmark of copyBytes (core/copy.hpp: memcpy in 256 KiB pieces) against one memcpy of
// the same bytes, from L2-sized (256 KiB) to memory-bound (16 MiB) copies; "cold" runs read each
// copy's source from the next slice of 128 MiB, so it starts out of cache. Bytes
// processed counts the bytes copied. Names read copy/<memcpy|pieces>/<hot|cold>/<bytes>.
//
//   build/bin/bench_copy --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/copy.hpp"

namespace {

void benchCopy(benchmark::State& state, bool pieces, bool cold) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  // Cold: each copy reads the next slice of a 128 MiB source, out of cache by the time it
  // comes round again.
  const std::size_t slices = cold ? std::max<std::size_t>(1, (std::size_t{128} << 20) / bytes) : 1;
  std::vector<std::byte> src(bytes * slices, std::byte{1}), dst(bytes, std::byte{2});
  std::size_t slice = 0;
  for (auto _ : state) {
    const std::byte* from = src.data() + slice * bytes;
    if (++slice == slices) slice = 0;
    if (pieces)
      tiercc::copyBytes(dst.data(), from, bytes);
    else
      std::memcpy(dst.data(), from, bytes);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(bytes));
}

void sizes(benchmark::internal::Benchmark* b) {
  for (std::int64_t s = 256 << 10; s <= 16 << 20; s *= 4) b->Arg(s);
}

BENCHMARK_CAPTURE(benchCopy, memcpy_hot, false, false)->Name("copy/memcpy/hot")->Apply(sizes);
BENCHMARK_CAPTURE(benchCopy, pieces_hot, true, false)->Name("copy/pieces/hot")->Apply(sizes);
BENCHMARK_CAPTURE(benchCopy, memcpy_cold, false, true)->Name("copy/memcpy/cold")->Apply(sizes);
BENCHMARK_CAPTURE(benchCopy, pieces_cold, true, true)->Name("copy/pieces/cold")->Apply(sizes);

}  // namespace

BENCHMARK_MAIN();
