/* A minimal C program on tiercc's C ABI: every rank contributes its rank number, and every
 * rank checks the sum. Run: build/bin/tiercc-run -n 4 --domain-size 2 build/bin/allreduce_c */
#include <dirent.h>
#include <stdio.h>

#include "tiercc/tiercc.h"

#define CHECK(call)                                                                          \
  do {                                                                                       \
    tiercc_result_t r_ = (call);                                                             \
    if (r_ != tiercc_success) {                                                              \
      fprintf(stderr, "%s failed: %s: %s\n", #call, tiercc_result_string(r_), tiercc_get_last_error()); \
      return 1;                                                                              \
    }                                                                                        \
  } while (0)

/* This process's open file descriptors: the scale-out connections are most of them, and they
 * grow with the number of domains (one per rail peer), not with the job's size. */
static int open_fds(void) {
  DIR* dir = opendir("/proc/self/fd");
  if (!dir) return -1;
  int n = 0;
  while (readdir(dir)) ++n;
  closedir(dir);
  return n - 3; /* ".", ".." and the directory's own descriptor */
}

int main(void) {
  tiercc_comm_t comm;
  int rank, size;
  CHECK(tiercc_comm_init_from_env(&comm));
  CHECK(tiercc_comm_rank(comm, &rank));
  CHECK(tiercc_comm_size(comm, &size));
  double value = rank, sum = 0;
  CHECK(tiercc_allreduce(&value, &sum, 1, tiercc_f64, tiercc_sum, comm));
  printf("rank %d of %d: sum of ranks = %g (expected %d), %d open file descriptors\n", rank, size, sum,
         size * (size - 1) / 2, open_fds());
  CHECK(tiercc_comm_destroy(comm));
  return sum == size * (size - 1) / 2 ? 0 : 1;
}
