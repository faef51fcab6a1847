// CUDA IPC Domain (see cuda_ipc_domain.hpp).
//
// Ordering of device writes before a flag. A flag is a word in host shared memory raised by the
// CPU, so the CPU must know the device writes are done before raising it: publishDeviceWrites()
// records an event on the writer's stream and synchronises on it (a blocking-sync event, so the
// thread sleeps rather than spins). The alternative, exporting the event with
// cudaIpcGetEventHandle so that peers cudaStreamWaitEvent on it, saves a host round trip but is
// racy with host flags: a peer that calls cudaStreamWaitEvent before this rank has recorded the
// event for call N waits on the record of call N-1 and reads a window still being written. Making
// that safe needs one event per in-flight call plus the flag anyway; for a one-shot allreduce
// whose every step already waits on host flags, the host sync costs a few microseconds and is
// obviously correct.
#include "scaleup-emu/cuda-ipc/cuda_ipc_domain.hpp"

#include <unistd.h>

#include <chrono>
#include <cstring>

#include "core/errors.hpp"
#include "core/log.hpp"
#include "scaleup-emu/cuda-ipc/cuda_check.hpp"
#include "bootstrap/store.hpp"

namespace tiercc {
namespace {

using namespace std::chrono_literals;

// How long teardown waits for peers to unmap this rank's window before freeing it anyway.
constexpr auto kTeardownWait = 5s;

// What a rank publishes about its window. Handles are opaque bytes meant for exactly this.
struct WindowExport {
  std::uint64_t windowBytes = 0;
  std::int32_t device = 0;
  std::int32_t pid = 0;
  cudaIpcMemHandle_t handle{};
};

std::string windowKey(int rank) { return "window/" + std::to_string(rank); }
std::string closedKey(int rank) { return "closed/" + std::to_string(rank); }

}  // namespace

CudaIpcDomain::CudaIpcDomain(std::shared_ptr<Store> store, CudaIpcDomainConfig config)
    : config_(std::move(config)), store_(std::move(store)) {
  TIERCC_REQUIRE_ARG(store_ != nullptr, "CudaIpcDomain: store is null");
  TIERCC_REQUIRE_ARG(config_.localRank >= 0 && config_.localRank < size(), "CudaIpcDomain: local rank ",
                     config_.localRank, " outside a domain of ", size());
  TIERCC_REQUIRE_ARG(config_.windowBytes > 0, "CudaIpcDomain: the window must not be empty");

  ShmDomainConfig flagConfig;
  flagConfig.segmentPrefix = config_.segmentPrefix;
  flagConfig.localRank = config_.localRank;
  flagConfig.peerNames = config_.peerNames;
  flagConfig.windowBytes = 0;  // the window is device memory; the segment holds flags only
  flagConfig.oversubscribed = config_.oversubscribed;
  flagConfig.setupDeadline = config_.setupDeadline;
  PrefixStore flagStore(store_, "flags/");
  flags_ = std::make_unique<ShmDomain>(flagStore, flagConfig);

  int devices = 0;
  TIERCC_CUDA_CHECK(cudaGetDeviceCount(&devices));
  device_ = config_.device >= 0 ? config_.device : config_.localRank % devices;
  TIERCC_REQUIRE_ARG(device_ < devices, "CudaIpcDomain: device ", device_, " requested, this host has ", devices);
  TIERCC_CUDA_CHECK(cudaSetDevice(device_));

  windows_.assign(size(), nullptr);
  try {
    TIERCC_CUDA_CHECK(cudaEventCreateWithFlags(&published_, cudaEventDisableTiming | cudaEventBlockingSync));
    void* own = nullptr;
    cuda::check(cudaMalloc(&own, config_.windowBytes), concat("cudaMalloc of a ", config_.windowBytes, "-byte window"));
    windows_[config_.localRank] = own;
    TIERCC_CUDA_CHECK(cudaMemset(own, 0, config_.windowBytes));
    WindowExport ex;
    ex.windowBytes = config_.windowBytes;
    ex.device = device_;
    ex.pid = static_cast<std::int32_t>(getpid());
    TIERCC_CUDA_CHECK(cudaIpcGetMemHandle(&ex.handle, own));
    Bytes bytes(sizeof ex);
    std::memcpy(bytes.data(), &ex, sizeof ex);
    store_->set(windowKey(config_.localRank), bytes);
    mapPeers(*store_);
  } catch (...) {
    stopped_.store(true);  // setup failed: no teardown handshake with peers that may never come
    release();
    throw;
  }
  TIERCC_LOG(Info, Shm) << "cuda-ipc domain of " << size() << " ranks mapped on device " << device_ << ", window "
                        << config_.windowBytes << " bytes per rank";
}

void CudaIpcDomain::mapPeers(Store& store) {
  for (int r = 0; r < size(); ++r) {
    if (r == config_.localRank) continue;
    Bytes bytes = store.get(windowKey(r), config_.setupDeadline);
    if (bytes.size() != sizeof(WindowExport))
      fail(ErrorCode::InvalidArgument, "cuda-ipc: ", config_.peerNames[r], " published a ", bytes.size(),
           "-byte window handle, this rank expects ", sizeof(WindowExport), ": same tiercc build on every rank?");
    WindowExport ex;
    std::memcpy(&ex, bytes.data(), sizeof ex);
    if (ex.windowBytes != config_.windowBytes)
      fail(ErrorCode::InvalidArgument, "cuda-ipc: ", config_.peerNames[r], " has a ", ex.windowBytes,
           "-byte window, this rank expects ", config_.windowBytes, ": is the window size the same on every rank?");
    // Lazy peer access: a window on another device of this host is reached over NVLink/PCIe.
    cuda::check(cudaIpcOpenMemHandle(&windows_[r], ex.handle, cudaIpcMemLazyEnablePeerAccess),
                concat("cudaIpcOpenMemHandle of ", config_.peerNames[r], "'s window (pid ", ex.pid, ", device ",
                       ex.device, ")"));
  }
}

CudaIpcDomain::~CudaIpcDomain() { release(); }

// Unmaps the peers' windows, then frees this rank's once every peer has unmapped it: freeing
// an exported allocation that a peer still maps is undefined behaviour in CUDA. The handshake
// is skipped (and the window freed at once) after abort, poison or a peer's failure, since a
// failed peer would only make it wait out kTeardownWait.
void CudaIpcDomain::release() noexcept {
  if (device_ >= 0) cudaSetDevice(device_);
  const int me = config_.localRank;
  for (int r = 0; r < static_cast<int>(windows_.size()); ++r) {
    if (r == me || windows_[r] == nullptr) continue;
    if (cudaError_t err = cudaIpcCloseMemHandle(windows_[r]); err != cudaSuccess) {
      TIERCC_LOG(Warn, Shm) << "cuda-ipc: cudaIpcCloseMemHandle of " << config_.peerNames[r]
                            << "'s window: " << cudaGetErrorString(err);
    }
    windows_[r] = nullptr;
  }
  if (!windows_.empty() && windows_[me] != nullptr) {
    if (!stopped_.load() && !peerFailed_.load()) {
      try {
        store_->setString(closedKey(me), "1");
        std::vector<std::string> keys;
        for (int r = 0; r < size(); ++r) keys.push_back(closedKey(r));
        store_->wait(keys, Deadline::after(kTeardownWait));
      } catch (const std::exception& e) {
        TIERCC_LOG(Warn, Shm) << "cuda-ipc: freeing the window without every peer's goodbye: " << e.what();
      }
    }
    if (cudaError_t err = cudaFree(windows_[me]); err != cudaSuccess) {
      TIERCC_LOG(Warn, Shm) << "cuda-ipc: cudaFree of the window: " << cudaGetErrorString(err);
    }
    windows_[me] = nullptr;
  }
  if (published_ != nullptr) cudaEventDestroy(published_);
  published_ = nullptr;
}

std::byte* CudaIpcDomain::window(int peer) { return static_cast<std::byte*>(windows_.at(peer)); }

void CudaIpcDomain::publishDeviceWrites(cudaStream_t stream) {
  TIERCC_CUDA_CHECK(cudaSetDevice(device_));
  TIERCC_CUDA_CHECK(cudaEventRecord(published_, stream));
  TIERCC_CUDA_CHECK(cudaEventSynchronize(published_));
}

void CudaIpcDomain::signal(int flag, std::uint32_t value) { flags_->signal(flag, value); }

void CudaIpcDomain::waitUntil(int peer, int flag, std::uint32_t value, Deadline deadline, const std::string& what) {
  try {
    flags_->waitUntil(peer, flag, value, deadline, what);
  } catch (const Error& e) {
    if (e.code() == ErrorCode::PeerFailure) peerFailed_.store(true);
    throw;
  }
}

void CudaIpcDomain::abort() {
  stopped_.store(true);
  flags_->abort();
}

void CudaIpcDomain::poison(const std::string& reason) {
  stopped_.store(true);
  flags_->poison(reason);
}

}  // namespace tiercc
