/* tiercc C ABI: NCCL-like calls over tiercc::Communicator. Every call returns a
 * tiercc_result_t; on failure tiercc_get_last_error() says what was wrong (per thread).
 * In place when sendbuf == recvbuf, as NCCL defines it. */
#ifndef TIERCC_TIERCC_H
#define TIERCC_TIERCC_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tiercc_comm* tiercc_comm_t;

typedef enum {
  tiercc_success = 0,
  tiercc_invalid_argument = 1,
  tiercc_timeout = 2,
  tiercc_peer_failure = 3,
  tiercc_transport_error = 4,
  tiercc_system_error = 5,
  tiercc_aborted = 6,
  tiercc_internal_error = 7,
  tiercc_not_supported = 8
} tiercc_result_t;

/* The *_max_enum values are not valid arguments: they make each enum as wide as an int, so that
 * a value a caller casts from any int is a value of the type (C++ would otherwise not define
 * reading it), and tiercc can refuse it with an error instead. */
typedef enum {
  tiercc_f32 = 0, tiercc_f64, tiercc_f16, tiercc_bf16, tiercc_i8,
  tiercc_u8, tiercc_i32, tiercc_u32, tiercc_i64, tiercc_u64,
  tiercc_datatype_max_enum = 0x7fffffff
} tiercc_datatype_t;

typedef enum {
  tiercc_sum = 0, tiercc_prod, tiercc_min, tiercc_max, tiercc_avg,
  tiercc_redop_max_enum = 0x7fffffff
} tiercc_redop_t;

/** Joins the job described by the environment (TIERCC_STORE/RANK/WORLD_SIZE, torchrun, mpirun). */
tiercc_result_t tiercc_comm_init_from_env(tiercc_comm_t* comm);
/** Joins explicitly: store address "host:port", number of ranks, this rank. */
tiercc_result_t tiercc_comm_init_rank(tiercc_comm_t* comm, const char* store_addr, int nranks, int rank);
/** NCCL's pattern for programs with a launcher of their own (MPI): one rank calls
 *  tiercc_get_unique_id, the program gives the bytes to every rank (e.g. MPI_Bcast of
 *  sizeof(tiercc_unique_id) bytes), and every rank calls tiercc_comm_init_rank_id with it. */
#define TIERCC_UNIQUE_ID_BYTES 128
typedef struct {
  char internal[TIERCC_UNIQUE_ID_BYTES];
} tiercc_unique_id;
/** Hosts the bootstrap store in this process (once; until the process exits) and writes an id
 *  naming it, with a namespace of its own, into *id (tiercc::UniqueId::create). */
tiercc_result_t tiercc_get_unique_id(tiercc_unique_id* id);
/** Joins the communicator of id with nranks ranks as rank; tiercc_invalid_argument for an id
 *  that is not one (all zeros: not received from the rank that made it; damaged). */
tiercc_result_t tiercc_comm_init_rank_id(tiercc_comm_t* comm, int nranks, tiercc_unique_id id, int rank);
/** Destroys the communicator (after its operations finish); the handle must not be used again
 *  (a later call on it is reported as "destroyed": a few bytes are kept for that). NULL is accepted. */
tiercc_result_t tiercc_comm_destroy(tiercc_comm_t comm);
/** Fails pending and future operations with tiercc_aborted; destroy it afterwards. */
tiercc_result_t tiercc_comm_abort(tiercc_comm_t comm);
/** tiercc_comm_shrink's flags: also leave out every rank of a domain that lost one. */
#define TIERCC_SHRINK_FAILED_DOMAINS 1u
/** Collective over the survivors of a failed (or healthy) communicator: a new communicator of
 *  the ranks still alive, in their old order (Communicator::shrink). *newcomm is NULL on a rank
 *  that TIERCC_SHRINK_FAILED_DOMAINS left out. The old communicator stays to be destroyed. */
tiercc_result_t tiercc_comm_shrink(tiercc_comm_t comm, unsigned flags, tiercc_comm_t* newcomm);

tiercc_result_t tiercc_comm_rank(tiercc_comm_t comm, int* rank);
tiercc_result_t tiercc_comm_size(tiercc_comm_t comm, int* size);
tiercc_result_t tiercc_comm_domain(tiercc_comm_t comm, int* domain);
tiercc_result_t tiercc_comm_local_rank(tiercc_comm_t comm, int* local_rank);
tiercc_result_t tiercc_comm_num_domains(tiercc_comm_t comm, int* num_domains);

tiercc_result_t tiercc_allreduce(const void* sendbuf, void* recvbuf, size_t count, tiercc_datatype_t datatype,
                                 tiercc_redop_t op, tiercc_comm_t comm);
tiercc_result_t tiercc_reduce_scatter(const void* sendbuf, void* recvbuf, size_t recvcount,
                                      tiercc_datatype_t datatype, tiercc_redop_t op, tiercc_comm_t comm);
tiercc_result_t tiercc_allgather(const void* sendbuf, void* recvbuf, size_t sendcount, tiercc_datatype_t datatype,
                                 tiercc_comm_t comm);
tiercc_result_t tiercc_broadcast(const void* sendbuf, void* recvbuf, size_t count, tiercc_datatype_t datatype,
                                 int root, tiercc_comm_t comm);
tiercc_result_t tiercc_reduce(const void* sendbuf, void* recvbuf, size_t count, tiercc_datatype_t datatype,
                              tiercc_redop_t op, int root, tiercc_comm_t comm);
tiercc_result_t tiercc_alltoall(const void* sendbuf, void* recvbuf, size_t count_per_peer,
                                tiercc_datatype_t datatype, tiercc_comm_t comm);
/** MPI_Alltoallv: counts and displacements in elements, arrays of comm size. */
tiercc_result_t tiercc_alltoallv(const void* sendbuf, const size_t* sendcounts, const size_t* sdispls, void* recvbuf,
                                 const size_t* recvcounts, const size_t* rdispls, tiercc_datatype_t datatype,
                                 tiercc_comm_t comm);
tiercc_result_t tiercc_send(const void* buf, size_t count, tiercc_datatype_t datatype, int peer, tiercc_comm_t comm);
tiercc_result_t tiercc_recv(void* buf, size_t count, tiercc_datatype_t datatype, int peer, tiercc_comm_t comm);
tiercc_result_t tiercc_barrier(tiercc_comm_t comm);

/** Symmetric memory (collective, like nvshmem_malloc): every rank asks for the same number of
 *  bytes; *ptr is memory that every peer of the rank's scale-up domain maps, so collectives on it
 *  are zero copy. tiercc_invalid_argument for 0 bytes or sizes that differ across ranks,
 *  tiercc_not_supported without a shared-memory scale-up backend; *ptr is untouched on failure. */
tiercc_result_t tiercc_mem_alloc(tiercc_comm_t comm, size_t bytes, void** ptr);
/** Frees memory from tiercc_mem_alloc (every rank, same order, after its last use);
 *  tiercc_invalid_argument, nothing freed, for any other pointer. */
tiercc_result_t tiercc_mem_free(tiercc_comm_t comm, void* ptr);

/** A fixed description of a result code ("timeout", ...). */
const char* tiercc_result_string(tiercc_result_t result);
/** The message of the last failed call on this thread ("" if none). */
const char* tiercc_get_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* TIERCC_TIERCC_H */
