// The C ABI (tiercc.h): each call converts exceptions into a result code and a thread-local
// message. A tiercc_comm is a Communicator plus a tombstone check against use after destroy.
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "tiercc/tiercc.h"
#include "tiercc/tiercc.hpp"

struct tiercc_comm {
  static constexpr unsigned kLive = 0x71e7cc01, kDead = 0xdeadcc01;
  unsigned magic = kLive;
  tiercc::Communicator comm;
};

namespace {

thread_local std::string tLastError;

tiercc_result_t setError(tiercc_result_t code, const std::string& message) {
  tLastError = message;
  return code;
}

template <typename F>
tiercc_result_t guarded(F&& f) {
  try {
    f();
    return tiercc_success;
  } catch (const tiercc::Error& e) {
    return setError(static_cast<tiercc_result_t>(e.code()), e.what());
  } catch (const std::bad_alloc&) {
    return setError(tiercc_system_error, "out of memory");
  } catch (const std::exception& e) {
    return setError(tiercc_internal_error, e.what());
  }
}

tiercc::Communicator& use(tiercc_comm_t comm, const char* call) {
  if (!comm) tiercc::fail(tiercc::ErrorCode::InvalidArgument, call, ": communicator is NULL");
  if (comm->magic != tiercc_comm::kLive)
    tiercc::fail(tiercc::ErrorCode::InvalidArgument, call, ": communicator was destroyed");
  return comm->comm;
}

template <typename T>
T* out(T* p, const char* call) {
  if (!p) tiercc::fail(tiercc::ErrorCode::InvalidArgument, call, ": output pointer is NULL");
  return p;
}

tiercc::DataType dt(tiercc_datatype_t d) { return static_cast<tiercc::DataType>(d); }
tiercc::ReduceOp rop(tiercc_redop_t o) { return static_cast<tiercc::ReduceOp>(o); }

// Destroyed handles stay reachable from here, to the end of the process (the list is never
// destroyed): they are kept on purpose, not leaked, and LeakSanitizer must not report them.
void keepTombstone(tiercc_comm* handle) {
  static std::mutex mutex;
  static auto* tombstones = new std::vector<tiercc_comm*>;
  std::lock_guard lock(mutex);
  tombstones->push_back(handle);
}

}  // namespace

extern "C" {

tiercc_result_t tiercc_comm_init_from_env(tiercc_comm_t* comm) {
  return guarded([&] {
    out(comm, "tiercc_comm_init_from_env");
    *comm = new tiercc_comm{tiercc_comm::kLive, tiercc::Communicator::fromEnv()};
  });
}

tiercc_result_t tiercc_comm_init_rank(tiercc_comm_t* comm, const char* store_addr, int nranks, int rank) {
  return guarded([&] {
    out(comm, "tiercc_comm_init_rank");
    if (!store_addr) tiercc::fail(tiercc::ErrorCode::InvalidArgument, "tiercc_comm_init_rank: store_addr is NULL");
    *comm = new tiercc_comm{tiercc_comm::kLive, tiercc::Communicator(store_addr, nranks, rank)};
  });
}

static_assert(sizeof(tiercc_unique_id) == tiercc::UniqueId::kBytes);

tiercc_result_t tiercc_get_unique_id(tiercc_unique_id* id) {
  return guarded([&] {
    if (!id) tiercc::fail(tiercc::ErrorCode::InvalidArgument, "tiercc_get_unique_id: id is NULL");
    const tiercc::UniqueId made = tiercc::UniqueId::create();
    std::memcpy(id->internal, made.bytes.data(), made.bytes.size());
  });
}

tiercc_result_t tiercc_comm_init_rank_id(tiercc_comm_t* comm, int nranks, tiercc_unique_id id, int rank) {
  return guarded([&] {
    out(comm, "tiercc_comm_init_rank_id");
    tiercc::UniqueId given;
    std::memcpy(given.bytes.data(), id.internal, given.bytes.size());
    *comm = new tiercc_comm{tiercc_comm::kLive, tiercc::Communicator(given, nranks, rank)};
  });
}

tiercc_result_t tiercc_comm_destroy(tiercc_comm_t comm) {
  if (!comm) return tiercc_success;
  return guarded([&] {
    use(comm, "tiercc_comm_destroy");
    // The handle itself is kept as a tombstone (a few bytes), so that a later call on it is
    // reported as "destroyed" instead of touching freed memory.
    comm->magic = tiercc_comm::kDead;
    tiercc::Communicator gone(std::move(comm->comm));
    keepTombstone(comm);
  });
}

tiercc_result_t tiercc_comm_abort(tiercc_comm_t comm) {
  return guarded([&] { use(comm, "tiercc_comm_abort").abort(); });
}

tiercc_result_t tiercc_comm_shrink(tiercc_comm_t comm, unsigned flags, tiercc_comm_t* newcomm) {
  return guarded([&] {
    tiercc::Communicator& parent = use(comm, "tiercc_comm_shrink");
    out(newcomm, "tiercc_comm_shrink");
    if (flags & ~TIERCC_SHRINK_FAILED_DOMAINS)
      tiercc::fail(tiercc::ErrorCode::InvalidArgument, "tiercc_comm_shrink: unknown flags ",
                   flags & ~TIERCC_SHRINK_FAILED_DOMAINS, " (known: TIERCC_SHRINK_FAILED_DOMAINS)");
    tiercc::Communicator child = parent.shrink((flags & TIERCC_SHRINK_FAILED_DOMAINS)
                                                   ? tiercc::Communicator::Shrink::FailedDomains
                                                   : tiercc::Communicator::Shrink::FailedRanks);
    *newcomm = child.valid() ? new tiercc_comm{tiercc_comm::kLive, std::move(child)} : nullptr;
  });
}

#define TIERCC_GETTER(fn, method) \
  tiercc_result_t fn(tiercc_comm_t comm, int* value) { \
    return guarded([&] { *out(value, #fn) = use(comm, #fn).method(); }); \
  }
TIERCC_GETTER(tiercc_comm_rank, rank)
TIERCC_GETTER(tiercc_comm_size, size)
TIERCC_GETTER(tiercc_comm_domain, domain)
TIERCC_GETTER(tiercc_comm_local_rank, localRank)
TIERCC_GETTER(tiercc_comm_num_domains, numDomains)
#undef TIERCC_GETTER

tiercc_result_t tiercc_allreduce(const void* s, void* r, size_t count, tiercc_datatype_t d, tiercc_redop_t op,
                                 tiercc_comm_t comm) {
  return guarded([&] { use(comm, "tiercc_allreduce").allreduce(s, r, count, dt(d), rop(op)); });
}

tiercc_result_t tiercc_reduce_scatter(const void* s, void* r, size_t recvcount, tiercc_datatype_t d,
                                      tiercc_redop_t op, tiercc_comm_t comm) {
  return guarded([&] { use(comm, "tiercc_reduce_scatter").reduceScatter(s, r, recvcount, dt(d), rop(op)); });
}

tiercc_result_t tiercc_allgather(const void* s, void* r, size_t sendcount, tiercc_datatype_t d, tiercc_comm_t comm) {
  return guarded([&] { use(comm, "tiercc_allgather").allgather(s, r, sendcount, dt(d)); });
}

tiercc_result_t tiercc_broadcast(const void* s, void* r, size_t count, tiercc_datatype_t d, int root,
                                 tiercc_comm_t comm) {
  return guarded([&] { use(comm, "tiercc_broadcast").broadcast(s, r, count, dt(d), root); });
}

tiercc_result_t tiercc_reduce(const void* s, void* r, size_t count, tiercc_datatype_t d, tiercc_redop_t op, int root,
                              tiercc_comm_t comm) {
  return guarded([&] { use(comm, "tiercc_reduce").reduce(s, r, count, dt(d), rop(op), root); });
}

tiercc_result_t tiercc_alltoall(const void* s, void* r, size_t count_per_peer, tiercc_datatype_t d,
                                tiercc_comm_t comm) {
  return guarded([&] { use(comm, "tiercc_alltoall").alltoall(s, r, count_per_peer, dt(d)); });
}

tiercc_result_t tiercc_alltoallv(const void* s, const size_t* sc, const size_t* sd, void* r, const size_t* rc,
                                 const size_t* rd, tiercc_datatype_t d, tiercc_comm_t comm) {
  return guarded([&] { use(comm, "tiercc_alltoallv").alltoallv(s, sc, sd, r, rc, rd, dt(d)); });
}

tiercc_result_t tiercc_send(const void* buf, size_t count, tiercc_datatype_t d, int peer, tiercc_comm_t comm) {
  return guarded([&] { use(comm, "tiercc_send").send(buf, count, dt(d), peer); });
}

tiercc_result_t tiercc_recv(void* buf, size_t count, tiercc_datatype_t d, int peer, tiercc_comm_t comm) {
  return guarded([&] { use(comm, "tiercc_recv").recv(buf, count, dt(d), peer); });
}

tiercc_result_t tiercc_barrier(tiercc_comm_t comm) {
  return guarded([&] { use(comm, "tiercc_barrier").barrier(); });
}

tiercc_result_t tiercc_mem_alloc(tiercc_comm_t comm, size_t bytes, void** ptr) {
  return guarded([&] {
    out(ptr, "tiercc_mem_alloc");
    *ptr = use(comm, "tiercc_mem_alloc").allocShared(bytes);
  });
}

tiercc_result_t tiercc_mem_free(tiercc_comm_t comm, void* ptr) {
  return guarded([&] { use(comm, "tiercc_mem_free").freeShared(ptr); });
}

const char* tiercc_result_string(tiercc_result_t result) {
  return tiercc::toString(static_cast<tiercc::ErrorCode>(result));
}

const char* tiercc_get_last_error(void) { return tLastError.c_str(); }

}  // extern "C"
