// What the reduction tests share: how a kernel call aliases its buffers (every variant the
// kernels promise to handle), and random float inputs that exercise Min/Max semantics.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>

#include "core/reduce.hpp"

namespace tiercc::test {

// Floats: mostly ordinary values, some NaN and signed zeros to exercise Min/Max semantics.
template <typename F>
F randomFloat(std::mt19937_64& rng) {
  const auto pick = rng() % 64;
  if (pick == 0) return std::numeric_limits<F>::quiet_NaN();
  if (pick == 1) return F{0};
  if (pick == 2) return -F{0};
  return static_cast<F>(std::uniform_real_distribution<double>(-4.0, 4.0)(rng));
}

// How dst relates to the inputs in one call.
enum class Aliasing { IntoDistinct, IntoSelf, Out3Distinct, Out3DstIsA, Out3DstIsB, Out3AIsB };

const char* toString(Aliasing a) {
  switch (a) {
    case Aliasing::IntoDistinct:
      return "reduceInto(dst, src)";
    case Aliasing::IntoSelf:
      return "reduceInto(dst, dst)";
    case Aliasing::Out3Distinct:
      return "reduce3(dst, a, b)";
    case Aliasing::Out3DstIsA:
      return "reduce3(a, a, b)";
    case Aliasing::Out3DstIsB:
      return "reduce3(b, a, b)";
    case Aliasing::Out3AIsB:
      return "reduce3(dst, a, a)";
  }
  return "?";
}

constexpr Aliasing kAliasings[] = {Aliasing::IntoDistinct, Aliasing::IntoSelf,   Aliasing::Out3Distinct,
                                   Aliasing::Out3DstIsA,   Aliasing::Out3DstIsB, Aliasing::Out3AIsB};

// One call of the kernels on a, b and dst, arranged as `aliasing` says; returns where the result is.
template <typename T>
T* reduceAs(Aliasing aliasing, T* a, T* b, T* dst, std::size_t count, DataType dt, ReduceOp op) {
  switch (aliasing) {
    case Aliasing::IntoDistinct:
      reduceInto(dst, a, count, dt, op);
      return dst;
    case Aliasing::IntoSelf:
      reduceInto(a, a, count, dt, op);
      return a;
    case Aliasing::Out3Distinct:
      reduce3(dst, a, b, count, dt, op);
      return dst;
    case Aliasing::Out3DstIsA:
      reduce3(a, a, b, count, dt, op);
      return a;
    case Aliasing::Out3DstIsB:
      reduce3(b, a, b, count, dt, op);
      return b;
    case Aliasing::Out3AIsB:
      reduce3(dst, a, a, count, dt, op);
      return dst;
  }
  return dst;
}

}  // namespace tiercc::test
