// The cuda-ipc Domain backend: ranks of one host whose windows are device memory. Each rank
// cudaMallocs its window and exports it with a CUDA IPC handle through the store; peers map it
// with cudaIpcOpenMemHandle, so window(peer) is a DEVICE pointer usable by this rank's kernels.
// Flags, mailboxes, poison/abort and peer-death detection are host shared memory: a ShmDomain
// with an empty window does them, so both backends wait (spin, then futex) the same way.
#pragma once

#include <cuda_runtime_api.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "scaleup-emu/domain.hpp"
#include "scaleup-emu/shm/shm_domain.hpp"

namespace tiercc {

class Store;

struct CudaIpcDomainConfig {
  std::string segmentPrefix;  ///< for the host flag segments, unique per job and domain
  int localRank = 0;
  std::vector<std::string> peerNames;  ///< per local rank, for messages
  std::size_t windowBytes = 0;         ///< device bytes per rank
  int device = -1;                     ///< CUDA device ordinal; -1: localRank modulo the device count
  bool oversubscribed = false;         ///< more ranks on this host than cores: spin less
  Deadline setupDeadline{Clock::time_point::max()};
};

class CudaIpcDomain final : public Domain {
 public:
  /// Collective over the domain: allocates this rank's device window, exchanges IPC handles
  /// through `store` (whose keys must be private to this domain) and maps every peer's window.
  /// The domain keeps `store` for the teardown handshake (a window must not be freed while a
  /// peer still maps it).
  CudaIpcDomain(std::shared_ptr<Store> store, CudaIpcDomainConfig config);
  ~CudaIpcDomain() override;
  CudaIpcDomain(const CudaIpcDomain&) = delete;
  CudaIpcDomain& operator=(const CudaIpcDomain&) = delete;

  const char* name() const override { return "cuda-ipc"; }
  int localRank() const override { return config_.localRank; }
  int size() const override { return static_cast<int>(config_.peerNames.size()); }
  /// A device pointer (this rank's allocation, or the peer's mapped through IPC).
  std::byte* window(int peer) override;
  std::size_t windowBytes() const override { return config_.windowBytes; }
  /// Host memory, like the flags. Device writes meant for peers must be complete first (see
  /// publishDeviceWrites).
  std::byte* mailbox(int peer) override { return flags_->mailbox(peer); }
  void signal(int flag, std::uint32_t value) override;
  void waitUntil(int peer, int flag, std::uint32_t value, Deadline deadline, const std::string& what) override;
  void abort() override;
  void poison(const std::string& reason) override;

  /// The CUDA device this rank's window lives on (current device of the calling thread after
  /// construction).
  int device() const { return device_; }
  /// Blocks until all work queued on `stream` so far is complete, so that a flag raised next
  /// cannot overtake the device writes it announces (the host thread sleeps, it does not spin).
  void publishDeviceWrites(cudaStream_t stream);

 private:
  void mapPeers(Store& store);
  void release() noexcept;

  CudaIpcDomainConfig config_;
  std::shared_ptr<Store> store_;
  std::unique_ptr<ShmDomain> flags_;  // flags and mailboxes in host shared memory; no window
  int device_ = -1;
  std::vector<void*> windows_;  // index = local rank; own: cudaMalloc, peers: IPC-mapped
  cudaEvent_t published_ = nullptr;
  std::atomic<bool> peerFailed_{false};
  std::atomic<bool> stopped_{false};  // aborted or poisoned: skip the teardown handshake
};

}  // namespace tiercc
