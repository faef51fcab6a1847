// tiercc public C++ API: the Communicator and its collectives.
// Errors are reported as tiercc::Error (see error.hpp); the C ABI in tiercc.h wraps this.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tiercc/error.hpp"
#include "tiercc/store.hpp"
#include "tiercc/types.hpp"

namespace tiercc {

/// Makes an in-process Store, shared by Communicators created as threads of one process (tests).
std::shared_ptr<Store> makeInProcessStore();

/// What one step of a collective's plan did on this rank (`tiercc-info --plan` lists the steps).
struct StepStats {
  const char* kind = "";  ///< "stage", "domain-reduce", "rail-copy", ... (static storage)
  const char* tier = "";  ///< "scale-up" or "scale-out": the tier that paces the step
  std::uint64_t scaleUpBytes = 0;   ///< bytes this rank moved inside its domain in the step
  std::uint64_t scaleOutBytes = 0;  ///< bytes this rank sent across domains in the step
  double seconds = 0;               ///< time this rank spent in the step; 0 when the call was not
                                    ///< timed (calls priced under 20 us are timed one in eight)
};

/// Bytes moved by this rank, split by tier, plus the slow-tier lower bound for the same work.
struct TierStats {
  std::uint64_t collectives = 0;      ///< collectives completed on this communicator
  std::uint64_t scaleUpBytes = 0;     ///< bytes this rank moved inside its domain (tier 0)
  std::uint64_t scaleOutBytes = 0;    ///< bytes this rank sent across domains (tier 1)
  std::uint64_t scaleOutBoundBytes = 0;  ///< this rank's share of the slow-tier lower bound
  std::string algorithm;              ///< the algorithm the last collective ran ("hierarchical", "ring", ...)
  std::string scaleUpPath;  ///< how the last collective moved data inside the domain: "staged", "zero_copy" or "cma"
  std::vector<StepStats> lastSteps;  ///< the last collective's plan, step by step, as this rank ran it
};

/// Handle of an asynchronous collective. Collectives on one communicator complete in issue order.
class Work {
 public:
  Work();
  ~Work();
  Work(Work&&) noexcept;
  Work& operator=(Work&&) noexcept;
  /// True when the collective has finished; rethrows its error if it failed.
  bool test();
  /// Blocks until done or until `timeout` passes (then throws Error{Timeout}: the operation goes
  /// on, and Communicator::abort() stops it); rethrows failures.
  void wait(std::chrono::milliseconds timeout = std::chrono::milliseconds::max());

  struct State;
  explicit Work(std::shared_ptr<State> state);

 private:
  std::shared_ptr<State> state_;
};

/// NCCL's pattern for programs that bring their own launcher (MPI, a scheduler): one rank makes
/// an id, the program hands its bytes to every rank (MPI_Bcast: tiercc/mpi.hpp does it), and
/// every rank passes it to Communicator(id, size, rank). No tiercc variable is needed.
struct UniqueId {
  static constexpr std::size_t kBytes = 128;
  std::array<std::uint8_t, kBytes> bytes{};  ///< all zeros: no id (refused by the constructor)

  /// Hosts the bootstrap store in this process (one per process, listening on
  /// TIERCC_BOOTSTRAP_ADDR or the first routable address, port chosen by the kernel, with a
  /// random secret; it lives until the process exits) and returns an id naming it, with a fresh
  /// namespace: communicators made from different ids never meet. The process must outlive the
  /// communicators made from the id, as rank 0 does under mpirun.
  static UniqueId create();
};

/// A group of ranks that run collectives together; ranks are grouped into scale-up domains.
class Communicator {
 public:
  /// Joins the job described by the environment (TIERCC_STORE/RANK/WORLD_SIZE, torchrun, Open MPI).
  static Communicator fromEnv();
  /// Joins explicitly: store address "host:port", world size and this process's rank.
  Communicator(const std::string& storeAddr, int worldSize, int rank);
  /// Joins the communicator of `id` (UniqueId::create on one rank, given to all): worldSize
  /// ranks, this one `rank`. InvalidArgument for an id that is not one (all zeros, damaged,
  /// another version), saying which.
  Communicator(const UniqueId& id, int worldSize, int rank);
  /// Joins through an existing store (e.g. makeInProcessStore() for threads of one process).
  Communicator(std::shared_ptr<Store> store, int worldSize, int rank);
  ~Communicator();
  Communicator(Communicator&&) noexcept;
  Communicator& operator=(Communicator&&) noexcept;

  /// This rank's index in [0, size()).
  int rank() const;
  /// Number of ranks.
  int size() const;
  /// Index of this rank's scale-up domain in [0, numDomains()).
  int domain() const;
  /// This rank's index inside its domain.
  int localRank() const;
  /// Number of ranks in this rank's domain.
  int domainSize() const;
  /// Number of scale-up domains.
  int numDomains() const;
  /// The scale-out transport in use ("ibverbs", "ucx", "tcp"), or "none" for a one-rank job.
  std::string transportName() const;
  /// The scale-up backend in use: "shm", "emulated" (over the scale-out transport, when a
  /// domain spans hosts) or "cuda-ipc".
  std::string scaleUpName() const;
  /// Where this rank's scale-out traffic leaves (its NIC: one per rail), for diagnostics:
  /// "198.18.1.1:40123 (rail1, TIERCC_SOCKET_IFNAME=rail* for local rank 1)" for TCP, the device,
  /// port and GID for ibverbs, the devices UCX may use for UCX.
  std::string scaleOutEndpoint() const;

  /// recv = op over all ranks of send (count elements). In place when send == recv.
  void allreduce(const void* send, void* recv, std::size_t count, DataType dt, ReduceOp op);
  /// recv (recvCount elements) = this rank's block of op over all ranks of send (size()*recvCount).
  void reduceScatter(const void* send, void* recv, std::size_t recvCount, DataType dt, ReduceOp op);
  /// recv (size()*sendCount) = every rank's send (sendCount) in rank order.
  void allgather(const void* send, void* recv, std::size_t sendCount, DataType dt);
  /// recv = root's send on every rank (count elements).
  void broadcast(const void* send, void* recv, std::size_t count, DataType dt, int root);
  /// root's recv = op over all ranks of send; other ranks' recv is untouched.
  void reduce(const void* send, void* recv, std::size_t count, DataType dt, ReduceOp op, int root);
  /// Block j of send (countPerPeer) goes to rank j; block i of recv comes from rank i.
  void alltoall(const void* send, void* recv, std::size_t countPerPeer, DataType dt);
  /// MPI_Alltoallv: sendCounts[j] elements at send + sendDispls[j] go to rank j; recvCounts[i]
  /// elements from rank i land at recv + recvDispls[i] (counts and displacements in elements,
  /// arrays of size()). sendCounts[j] here must equal recvCounts[rank()] on rank j. Not in place.
  void alltoallv(const void* send, const std::size_t* sendCounts, const std::size_t* sendDispls, void* recv,
                 const std::size_t* recvCounts, const std::size_t* recvDispls, DataType dt);
  /// Point-to-point: sends count elements to peer (matched in order with peer's recv).
  void send(const void* buf, std::size_t count, DataType dt, int peer);
  /// Point-to-point: receives count elements from peer.
  void recv(void* buf, std::size_t count, DataType dt, int peer);
  /// Returns when every rank has entered the barrier.
  void barrier();

  /// Asynchronous variants: run in issue order on the communicator's progress thread.
  Work allreduceAsync(const void* send, void* recv, std::size_t count, DataType dt, ReduceOp op);
  Work reduceScatterAsync(const void* send, void* recv, std::size_t recvCount, DataType dt, ReduceOp op);
  Work allgatherAsync(const void* send, void* recv, std::size_t sendCount, DataType dt);
  Work broadcastAsync(const void* send, void* recv, std::size_t count, DataType dt, int root);
  Work reduceAsync(const void* send, void* recv, std::size_t count, DataType dt, ReduceOp op, int root);
  Work alltoallAsync(const void* send, void* recv, std::size_t countPerPeer, DataType dt);
  /// The arrays are copied: they need not outlive the call (the buffers must).
  Work alltoallvAsync(const void* send, const std::size_t* sendCounts, const std::size_t* sendDispls, void* recv,
                      const std::size_t* recvCounts, const std::size_t* recvDispls, DataType dt);
  Work barrierAsync();

  /// Collective (every rank, same size, same order, like nvshmem_malloc): `bytes` of memory
  /// that every peer of this rank's scale-up domain maps, so collectives on it copy nothing
  /// through staging (zero copy). Zero-filled, page-aligned; lives until freeShared or until
  /// the communicator is destroyed. Throws InvalidArgument for size 0 or sizes that differ
  /// across ranks (nothing allocated), NotSupported when the scale-up backend has no shared memory.
  void* allocShared(std::size_t bytes);
  /// Frees memory from allocShared; every rank frees its allocations in the same order, after
  /// their last use in a collective. InvalidArgument (nothing freed) for any other pointer.
  void freeShared(void* p);

  /// Collective: ranks with the same color form a new communicator, ordered by (key, rank).
  /// A negative color returns an empty communicator (valid() == false).
  Communicator split(int color, int key);
  /// Which ranks a shrink leaves out: the failed ones, or every rank of a domain that holds a
  /// failed one (the rack is the failure domain: its survivors may have lost their fast tier).
  enum class Shrink { FailedRanks, FailedDomains };
  /// Collective over the survivors, on a failed communicator or a healthy one (ULFM's shrink):
  /// they agree through the store on who is alive (a rank that does not join is out once its
  /// heartbeat stops, within TIERCC_HEARTBEAT_TIMEOUT) and form a new communicator, ranked in
  /// their old order, with the parent's domains, re-planned for its topology. A rank left out by
  /// Shrink::FailedDomains gets an empty communicator (valid() == false). Timeout when a rank
  /// that still beats never joins; PeerFailure on a rank the others judged failed.
  Communicator shrink(Shrink which = Shrink::FailedRanks);
  /// Fails every pending and future operation of this communicator with Error{Aborted}, and
  /// tells the peers. Safe from another thread while an operation blocks (the usual use: a
  /// Work::wait(timeout) that gave up): it returns once that operation has stopped, so the
  /// caller's buffers are not touched afterwards. Not from inside an operation.
  void abort();
  /// False for a moved-from communicator, a split with negative color, or a rank a shrink left out.
  bool valid() const;
  /// Bytes per tier moved so far, against the slow-tier lower bound.
  TierStats stats() const;
  /// What the cost model assumes of each tier, the staging window it sized, and where the figures
  /// came from, e.g. "scale-up 12 GB/s (96 Gbit/s), 2 us per step; scale-out ...; window 4194304 B
  /// per rank (auto) (probed at init)". The same on every rank (the selectors must choose alike).
  std::string tierModel() const;

  class Impl;

 private:
  explicit Communicator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tiercc
