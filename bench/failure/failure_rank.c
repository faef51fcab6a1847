/* One rank of bench/failure/table.sh: joins with tiercc_comm_init_rank (rank 0 hosts the store,
 * as under mpirun, no launcher watching), says "ready" after 20 allreduces of 256 KiB, then
 * loops them until one fails, and prints when (CLOCK_REALTIME, ns) and what it raised.
 * Usage: failure_rank STORE_ADDR NRANKS RANK */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tiercc/tiercc.h"

static long long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s STORE_ADDR NRANKS RANK\n", argv[0]);
    return 2;
  }
  const int nranks = atoi(argv[2]), rank = atoi(argv[3]);
  tiercc_comm_t comm;
  tiercc_result_t r = tiercc_comm_init_rank(&comm, argv[1], nranks, rank);
  if (r != tiercc_success) {
    fprintf(stderr, "rank %d: init failed: %s\n", rank, tiercc_get_last_error());
    return 1;
  }
  enum { kCount = 65536 }; /* 256 KiB of f32 */
  static float buf[kCount];
  for (long i = 0;; ++i) {
    r = tiercc_allreduce(buf, buf, kCount, tiercc_f32, tiercc_sum, comm);
    if (r != tiercc_success) break;
    if (i == 20) {
      printf("ready\n");
      fflush(stdout);
    }
  }
  printf("raised %s at %lld: %s\n", tiercc_result_string(r), now_ns(), tiercc_get_last_error());
  fflush(stdout);
  tiercc_comm_destroy(comm);
  return 0;
}
