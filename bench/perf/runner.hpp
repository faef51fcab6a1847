// One tiercc-perf measurement: the buffer shapes of a collective at a given size (nccl-tests'
// conventions), the timed loop, the correctness check, and the bytes each tier carried.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "bench/perf/options.hpp"
#include "tiercc/tiercc.hpp"

namespace tiercc::perf {

struct Shape {
  std::size_t count = 0;      ///< the count argument of the call
  std::size_t sendElems = 0;  ///< elements in the send buffer
  std::size_t recvElems = 0;  ///< elements in the receive buffer
  std::size_t bytes = 0;      ///< the size column: nccl-tests' definition per collective
  double busFactor = 1;       ///< busbw = algbw x busFactor
};

/// Shape of `coll` for a buffer of about `bytes` on `n` ranks; bytes is rounded down to whole
/// elements (and whole blocks per rank where the collective has blocks).
Shape shapeOf(Coll coll, std::size_t bytes, DataType dt, int n);

struct Result {
  double timeUs = 0;        ///< average per call, the slowest rank's
  double algbw = 0, busbw = 0;
  std::uint64_t wrong = 0;  ///< elements that differ from the reference, over all ranks
  double scaleUpBytes = 0, scaleOutBytes = 0, boundBytes = 0;  ///< per call, summed over ranks
  double cpuUs = 0;  ///< CPU time (user and system, every thread) per call, summed over ranks
  bool ran = false;
  std::string algorithm;    ///< what ran (stats().algorithm), the selector's choice under --algo auto
  std::string path;         ///< how it moved data inside the domain (stats().scaleUpPath)
};

/// Measures one placement; buffers are allocated by the caller once, at the largest size.
Result measure(Communicator& comm, const Options& o, const Shape& s, bool inPlace, std::byte* send, std::byte* recv);

}  // namespace tiercc::perf
