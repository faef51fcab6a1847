// The UCX transport's state (see ucx_transport.hpp): peers with their endpoints and sequence
// numbers (the rail peers from init, the others from their first operation), and one Pending
// record per posted operation that tracks its ucp requests. Records
// outlive a failed operation until UCX is done with its requests, so no callback ever touches
// an operation the caller may already have freed.
#pragma once

#include <ucp/api/ucp.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "tiercc/error.hpp"
#include "transport/factory.hpp"
#include "transport/transport.hpp"
#include "transport/ucx/ucx_context.hpp"
#include "transport/ucx/ucx_liveness.hpp"
#include "transport/ucx/ucx_region.hpp"
#include "transport/ucx/ucx_wire.hpp"

namespace tiercc::ucxnet {

class UcxTransport;

struct Peer {
  UcxTransport* transport = nullptr;
  int rank = -1;
  std::string name;
  ucp_ep_h ep = nullptr;
  bool errorHandling = true;                  // ep created with UCP_ERR_HANDLING_MODE_PEER
  std::optional<ProcessIdentity> process;     // watched when UCX cannot watch the peer
  std::uint64_t sendSeq = 0, recvSeq = 0, writeSeq = 0, notifySeq = 0;
  std::map<Bytes, ucp_rkey_h> rkeys;  // unpacked remote keys, by packed bytes
  ucs_status_t epFailure = UCS_OK;    // set by UCX's error handler, acted on after progress
  std::string error;                  // non-empty once poisoned
  ErrorCode errorCode = ErrorCode::TransportError;
};

struct Pending {
  enum class Type { Send, Recv, Write, Notify };
  UcxTransport* transport = nullptr;
  Type type = Type::Send;
  TransferOp* op = nullptr;  // null once detached: its peer failed and the caller was told
  int peer = -1;
  std::uint64_t seq = 0;
  int outstanding = 0;            // ucp requests not yet complete
  std::vector<void*> requests;    // those requests, for cancellation
  ucs_status_t status = UCS_OK;   // the first failure
  SendHeader header{};            // Send: what goes out; Recv: what came in
  bool headerArrived = false;
  std::size_t payloadBytes = 0;   // Recv: bytes that arrived
  Notification note{};            // Write: what goes out after the data; Notify: what came in
  bool notified = false;          // Write: the notification is on its way
  bool queued = false;            // in the transport's ready list
};

class UcxTransport final : public Transport {
 public:
  UcxTransport(Store& store, const TransportSetup& setup);
  ~UcxTransport() override;

  const char* name() const override { return "ucx"; }
  std::string endpoint() const override;
  void isend(TransferOp& op) override;
  void irecv(TransferOp& op) override;
  std::shared_ptr<MemoryRegion> registerMemory(void* buf, std::size_t len) override;
  void invalidateMemory(void* buf, std::size_t len) override;
  void iwrite(WriteOp& op) override;
  void inotify(TransferOp& op) override;
  void wait(const std::vector<TransferOp*>& ops, Deadline deadline, const std::string& what) override;
  bool test(TransferOp& op, const std::string& what) override;
  void abort() override;

  // Called from ucp callbacks, inside ucp_worker_progress or ucp_request_cancel.
  void requestDone(Pending& p, void* request, ucs_status_t status);
  void endpointFailed(Peer& peer, ucs_status_t status);

 private:
  // Setup and teardown (ucx_transport.cpp).
  void createWorker();
  void publishAddress(Store& store);
  void connectAtInit(Store& store, const TransportSetup& setup);
  void awaitWireup(Store& store, const TransportSetup& setup, const std::vector<int>& ranks);
  // How to reach a peer and how to watch it, as it published them ("net/<rank>", "proc/<rank>").
  struct Contact {
    Bytes address;
    std::optional<ProcessIdentity> process;
  };
  static Contact fetchContact(Store& store, int rank, Deadline deadline);
  Peer& addPeer(int rank, const Contact& contact);  // the caller holds mutex_
  void createEndpoint(Peer& peer, const Bytes& address);
  void closeAll();
  bool busy() const;

  // Posting (ucx_transport.cpp); the caller holds mutex_ (usablePeer releases it while it fetches
  // the contact of a peer connected on first use).
  Peer& usablePeer(std::unique_lock<std::mutex>& lock, int rank, const char* op);
  Pending& newPending(Pending::Type type, TransferOp& op, Peer& peer);
  ucp_request_param_t sendParam(Pending& p);
  ucp_request_param_t recvParam(Pending& p, bool payload, ucp_tag_recv_info_t* info);
  void track(Pending& p, ucs_status_ptr_t request);
  void settle(Pending& p);
  void sendNotification(Pending& p);
  ucp_rkey_h remoteKey(Peer& peer, const Bytes& packed);

  // Progress and failure (ucx_progress.cpp); the caller holds mutex_.
  void progress();
  void finish(Pending& p);
  void completeReceive(Pending& p, Peer& peer);
  void checkLiveness();
  void poison(Peer& peer, ErrorCode code, const std::string& why);
  void closeEndpoint(Peer& peer, bool force);
  void throwIfFailed(const TransferOp& op, const std::string& what);
  void sleep(std::unique_lock<std::mutex>& lock, Deadline deadline);

  std::shared_ptr<UcxContext> context_;
  RegionCache regions_;
  ucp_worker_h worker_ = nullptr;
  int workerFd_ = -1;
  int wakeFd_ = -1;  // eventfd: abort() wakes a rank sleeping in poll
  int rank_ = 0;
  ProcessIdentity self_;
  std::function<std::string(int)> peerName_;
  std::vector<bool> addressable_;           // by rank: in setup.peers
  std::shared_ptr<Store> laterStore_;       // null: every peer connected at init
  std::chrono::milliseconds laterTimeout_;  // a later peer's contact must be in the store this soon
  std::mutex mutex_;  // every ucp call on the worker (thread mode SERIALIZED)
  std::map<int, Peer> peers_;
  std::unordered_map<Pending*, std::unique_ptr<Pending>> live_;
  std::deque<Pending*> ready_;       // records whose requests are all done
  std::vector<Peer*> failedPeers_;   // endpoints UCX reported failed
  std::vector<void*> closing_;       // endpoint close requests in flight
  Clock::time_point nextLivenessCheck_{};
  std::atomic<bool> aborted_{false};
};

}  // namespace tiercc::ucxnet
