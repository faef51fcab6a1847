// The measurement of tiercc-transport-bench: two ranks over one Transport, a bandwidth round
// (rank 0 keeps a window of writes or sends in flight to rank 1) or a latency round (ping-pong).
// Buffers are allocated and registered once, at the largest size, outside every timed loop.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "bench/transport/options.hpp"
#include "transport/transport.hpp"

namespace tiercc {
class Store;
}

namespace tiercc::tbench {

/// What rank 0 measured at one size (rank 1 returns an empty Sample).
struct Sample {
  std::size_t bytes = 0;
  int iters = 0;
  int window = 0;
  double seconds = 0;               ///< bw: from the peer's go to its acknowledgement of the last message
  double localSeconds = 0;          ///< bw: from the go to the last local completion (perftest's way)
  std::vector<double> oneWayUs;     ///< lat: round trip / 2 of every timed iteration
};

class PairBench {
 public:
  /// Allocates and registers both buffers (maxBytes each) and exchanges region descriptors
  /// through `store`. Both ranks construct it together.
  PairBench(Transport& transport, Store& store, int rank, const Options& options);
  ~PairBench();
  PairBench(const PairBench&) = delete;
  PairBench& operator=(const PairBench&) = delete;

  /// One size: a warm-up round, then the timed round; the data received is checked after each
  /// round (outside the timing). Throws on any transport error or wrong data.
  Sample run(std::size_t bytes);

 private:
  struct Round;
  void bandwidthRound(Round& r, Sample& out);
  void latencyRound(Round& r, Sample& out);
  void post(TransferOp& op, bool outgoing);
  void complete(TransferOp& op, const Round& r);
  void sendControl(const Round& r);
  void receiveControl(const Round& r);
  void checkReceived(std::size_t bytes) const;

  Transport& transport_;
  const Options& options_;
  const int rank_;
  const int peer_;
  std::size_t capacity_;
  std::byte* send_ = nullptr;
  std::byte* recv_ = nullptr;
  std::shared_ptr<MemoryRegion> sendRegion_, recvRegion_;
  Bytes peerRecv_;  ///< the peer's receive region descriptor (for --op write)
  std::uint64_t control_[2] = {0, 0};
};

}  // namespace tiercc::tbench
