// The shared-memory Domain backend: ranks of one host, each owning one segment that holds its
// flags and its window. Peers map every segment; waits block on a futex after a short spin and
// check the peer's process every slice, so a dead peer is reported instead of hanging the job.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "scaleup-emu/domain.hpp"
#include "scaleup-emu/shm/shm_segment.hpp"
#include "scaleup-emu/shm/symmetric_heap.hpp"

namespace tiercc {

class Store;

struct ShmDomainConfig {
  std::string segmentPrefix;           ///< unique per job and communicator, e.g. "/tiercc-ab12-c0-d1"
  int localRank = 0;
  std::vector<std::string> peerNames;  ///< per local rank, for messages: "rank 5 (domain 1, local rank 1)"
  std::size_t windowBytes = 0;
  bool oversubscribed = false;         ///< more ranks on this host than cores: spin less
  Deadline setupDeadline{Clock::time_point::max()};
};

class ShmDomain final : public Domain {
 public:
  /// Creates this rank's segment, maps every peer's (rendezvous through `store`, whose keys
  /// must already be private to this domain), then unlinks the names. Then decides, with the
  /// peers, whether cross-memory attach works here (TIERCC_SHM_COPY=auto|cma|staged).
  ShmDomain(Store& store, ShmDomainConfig config);
  ~ShmDomain() override;

  const char* name() const override { return "shm"; }
  int localRank() const override { return config_.localRank; }
  int size() const override { return static_cast<int>(config_.peerNames.size()); }
  std::byte* window(int peer) override;
  std::size_t windowBytes() const override { return config_.windowBytes; }
  void signal(int flag, std::uint32_t value) override;
  void waitUntil(int peer, int flag, std::uint32_t value, Deadline deadline, const std::string& what) override;
  void abort() override;
  void poison(const std::string& reason) override;
  std::byte* mailbox(int peer) override;
  bool mailboxCoherent() const override { return true; }
  SymmetricMemory* symmetric() override { return &heap_; }
  void* allocateSymmetric(Store& store, std::size_t bytes, Deadline deadline) override;
  void freeSymmetric(void* p) override;
  bool crossMemoryAttach() const override { return crossMemoryAttach_; }
  void readPeer(int peer, std::uint64_t remote, void* dst, std::size_t bytes) override;

  struct Header;

 private:
  /// Probes process_vm_readv on every peer and agrees with them through `store`.
  void decideCopyMode(Store& store);
  Header* header(int peer);
  /// Why the peer failed (poisoned itself, or its process is gone), or empty if it did not.
  std::string peerFailure(int peer);

  /// This process's consent that its siblings read it (PR_SET_PTRACER_ANY), held while this
  /// domain may use cross-memory attach; counted per process, the last holder undoes it.
  class PtracerConsent {
   public:
    PtracerConsent() = default;
    PtracerConsent(const PtracerConsent&) = delete;
    PtracerConsent& operator=(const PtracerConsent&) = delete;
    ~PtracerConsent() { drop(); }
    void take();
    void drop();

   private:
    bool held_ = false;
  };

  ShmDomainConfig config_;
  PtracerConsent ptracer_;
  std::vector<ShmSegment> segments_;  // index = local rank
  std::atomic<bool> aborted_{false};
  SymmetricHeap heap_;
  bool crossMemoryAttach_ = false;
  bool unfencedSignals_ = false;  // TIERCC_SHM_SIGNAL=auto and this process registered for membarrier
};

}  // namespace tiercc
