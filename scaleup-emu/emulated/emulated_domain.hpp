// The emulated Domain backend: the same memory semantics for members that cannot share memory,
// carried over a Transport. Each rank holds a replica of every peer's window; signal() sends
// the bytes of this rank's window that changed since its last signal, then the flag, so a
// peer that sees the flag reads a replica equal to the window at signal time. This is exact
// because collectives only write their own window and only rewrite it after every peer has
// released the previous round (exec/round.cpp).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "scaleup-emu/domain.hpp"
#include "scaleup-emu/emulated/window_diff.hpp"
#include "transport/transport.hpp"

namespace tiercc {

class Store;

struct EmulatedDomainConfig {
  int localRank = 0;
  std::vector<std::string> peerNames;  ///< per local rank, for messages: "rank 5 (domain 1, local rank 1)"
  std::size_t windowBytes = 0;
  bool spansHosts = false;  ///< members on other hosts: its transport must listen off loopback
  /// How long signal() may wait for earlier sends that overlap its bytes to leave (TIERCC_TIMEOUT):
  /// a peer that stops reading its connection stalls them, and signal() then fails with Timeout.
  std::chrono::milliseconds timeout{300000};
  /// How long the destructor waits for the peers' goodbyes (they arrive once every member has
  /// destroyed its domain), so that no connection closes with data still unread.
  std::chrono::milliseconds shutdownTimeout{10000};
};

class EmulatedDomain final : public Domain {
 public:
  /// `transport` connects the members of this domain, addressed by local rank (rank = local
  /// rank, peers = the other members); null for a domain of one. The domain owns it: from
  /// here on only its progress thread calls it (transports are not thread-safe).
  EmulatedDomain(std::unique_ptr<Transport> transport, EmulatedDomainConfig config);
  ~EmulatedDomain() override;

  const char* name() const override { return "emulated"; }
  int localRank() const override { return config_.localRank; }
  int size() const override { return static_cast<int>(config_.peerNames.size()); }
  std::byte* window(int peer) override { return windows_[peer].get(); }
  std::size_t windowBytes() const override { return config_.windowBytes; }
  void signal(int flag, std::uint32_t value) override;
  void waitUntil(int peer, int flag, std::uint32_t value, Deadline deadline, const std::string& what) override;
  void abort() override;
  void poison(const std::string& reason) override;
  /// Replicated like the window: each rank's buffer is its window, then its mailbox.
  std::byte* mailbox(int peer) override { return windows_[peer].get() + mailboxOffset_; }

  struct WireHeader;
  struct Outgoing;
  struct Incoming;

 private:
  struct FreeBytes {
    void operator()(std::byte* p) const;
  };
  using Buffer = std::unique_ptr<std::byte, FreeBytes>;

  void enqueue(std::unique_ptr<Outgoing> out);
  std::unique_ptr<Outgoing> takeSpare();  // mu_ held
  void waitForShadow(int flag, const std::vector<ByteRange>& ranges, std::unique_lock<std::mutex>& lock);
  std::string pendingPeers(const std::vector<ByteRange>& ranges) const;  // mu_ held
  // The progress thread (emulated_progress.cpp).
  void progressLoop();
  // The progress thread's steps; each returns whether anything moved.
  bool postQueued();
  bool reapSends();
  bool pollReceives();
  bool pollPeer(int peer);
  void postHeaderReceive(int peer);
  void onHeader(int peer);
  void onPayload(int peer);
  void peerFailed(int peer, const std::string& why);
  bool shutdownDone();
  void idle(Clock::time_point lastActivity);
  bool overlapsInFlight(const std::vector<ByteRange>& ranges) const;  // mu_ held

  EmulatedDomainConfig config_;
  std::unique_ptr<Transport> transport_;
  std::size_t mailboxOffset_ = 0;  // in each rank's buffer, after the window
  std::size_t replicated_ = 0;     // bytes of each buffer that signal() keeps in sync (window + mailbox)
  std::vector<Buffer> windows_;    // index = local rank: ours, and replicas of the peers'
  Buffer shadow_;                  // our window as last sent; the source of every data send
  std::vector<ByteRange> diff_;    // signal()'s changed ranges, swapped into the entry it queues

  // Shared between the callers and the progress thread, under mu_.
  mutable std::mutex mu_;
  std::condition_variable changed_;  // flags, peer failures, abort, finished sends
  std::condition_variable wake_;     // the progress thread: work queued, a waiter arrived, stop
  std::vector<std::array<std::uint32_t, kNumFlags>> flags_;  // index = local rank
  std::vector<std::string> peerError_;                       // non-empty: why waits on it fail
  std::vector<std::unique_ptr<Outgoing>> outgoing_;          // queued or in flight, in order
  std::vector<std::unique_ptr<Outgoing>> spare_;             // finished signal entries, for reuse
  std::uint64_t wakeups_ = 0;
  int waiters_ = 0;
  bool stopping_ = false;
  bool graceful_ = true;  // stopping: wait for the peers' goodbyes
  Clock::time_point stopDeadline_;
  bool poisoned_ = false;
  bool progressStopped_ = false;  // the progress thread failed: queue nothing more
  std::atomic<bool> aborted_{false};

  // Owned by the progress thread.
  std::vector<std::unique_ptr<Incoming>> incoming_;  // index = local rank
  std::vector<bool> gone_;                           // failed or said goodbye: no more receives
  std::vector<bool> failed_;                         // no more sends either
  std::vector<bool> byeFrom_;
  std::vector<Outgoing*> scratch_;  // postQueued/reapSends: the entries they work on, outside mu_

  std::thread progress_;
};

/// Connects the members with a `transportName` transport of their own (not the collectives'
/// point-to-point one: a transport matches messages per peer in posting order, so the two
/// streams must not share a connection) and builds the domain. `store` must be private to this
/// domain. All members call it together; a domain of one needs no transport.
std::unique_ptr<EmulatedDomain> createEmulatedDomain(const std::string& transportName, Store& store,
                                                     EmulatedDomainConfig config, Deadline deadline);

}  // namespace tiercc
