/* mpi_coll_bench: the peer side of bench/compare. Times one MPI collective over a size sweep
 * and prints nccl-tests columns (out-of-place only), so that Open MPI and MPICH can be put
 * next to tiercc-perf. Built once per MPI by run.sh; plain C99 + MPI, nothing else. The JSON
 * lines add oop_cpu_us: the CPU time (user and system, getrusage) of one call, every rank's
 * added up. */
#include <errno.h>
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

enum Coll { kAllreduce, kAllgather, kAlltoall, kReduceScatter, kBroadcast, kReduce };

struct Options {
  enum Coll coll;
  const char* coll_name;
  size_t min_bytes;
  size_t max_bytes;
  double factor;
  int iters;
  int warmup;
  const char* json_path;
};

/* User and system CPU seconds of this process so far, all its threads. */
static double cpu_seconds(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

/* Parses "8", "64K", "64M", "1G" (binary units, as nccl-tests does). Returns 0 on error. */
static size_t parse_size(const char* text) {
  char* end = NULL;
  errno = 0;
  unsigned long long value = strtoull(text, &end, 10);
  if (errno != 0 || end == text) return 0;
  const char* units = "KMG";
  const char* unit = *end != '\0' ? strchr(units, *end & ~0x20) : NULL; /* upper case */
  if (unit != NULL) {
    value <<= 10 * (unit - units + 1);
    end++;
  }
  if (*end == 'B' || *end == 'b') end++;
  return *end == '\0' ? (size_t)value : 0;
}

static void usage(const char* argv0) {
  fprintf(stderr,
          "usage: %s -c allreduce|allgather|alltoall|reduce_scatter|broadcast|reduce\n"
          "          [-b MIN] [-e MAX] [-f FACTOR] [-n ITERS] [-w WARMUP] [--json FILE]\n"
          "  sizes follow nccl-tests: allreduce, broadcast, reduce = buffer per rank,\n"
          "  allgather = total received per rank, alltoall and reduce_scatter = total sent\n"
          "  per rank; the count column is the count passed to the call (per rank, per peer\n"
          "  for alltoall, per block for reduce_scatter); type is f32, root 0, op sum\n",
          argv0);
}

static int parse_options(int argc, char** argv, struct Options* opt) {
  *opt = (struct Options){kAllreduce, NULL, 8, 64u << 20, 2.0, 20, 5, NULL};
  for (int i = 1; i < argc; i++) {
    const char* arg = argv[i];
    const char* val = i + 1 < argc ? argv[i + 1] : NULL;
    if (val == NULL) return -1;
    if (!strcmp(arg, "-c")) {
      opt->coll_name = val;
      if (!strcmp(val, "allreduce"))
        opt->coll = kAllreduce;
      else if (!strcmp(val, "allgather"))
        opt->coll = kAllgather;
      else if (!strcmp(val, "alltoall"))
        opt->coll = kAlltoall;
      else if (!strcmp(val, "reduce_scatter"))
        opt->coll = kReduceScatter;
      else if (!strcmp(val, "broadcast"))
        opt->coll = kBroadcast;
      else if (!strcmp(val, "reduce"))
        opt->coll = kReduce;
      else
        return -1;
    } else if (!strcmp(arg, "-b")) {
      opt->min_bytes = parse_size(val);
    } else if (!strcmp(arg, "-e")) {
      opt->max_bytes = parse_size(val);
    } else if (!strcmp(arg, "-f")) {
      opt->factor = atof(val);
    } else if (!strcmp(arg, "-n")) {
      opt->iters = atoi(val);
    } else if (!strcmp(arg, "-w")) {
      opt->warmup = atoi(val);
    } else if (!strcmp(arg, "--json")) {
      opt->json_path = val;
    } else {
      return -1;
    }
    i++;
  }
  if (opt->coll_name == NULL || opt->min_bytes == 0 || opt->max_bytes < opt->min_bytes ||
      opt->max_bytes / sizeof(float) > INT_MAX || opt->factor <= 1.0 || opt->iters < 1 ||
      opt->warmup < 0)
    return -1;
  return 0;
}

/* Whether the size is divided into a block per rank (allgather, alltoall, reduce_scatter). */
static int per_rank_blocks(enum Coll coll) { return coll == kAllgather || coll == kAlltoall || coll == kReduceScatter; }

/* Elements per rank block, which is also nccl-tests' count column (the count passed to the call):
 * where there is a block per rank the size is divided by nranks and rounded down. */
static size_t block_count(const struct Options* opt, size_t bytes, int nranks) {
  size_t count = bytes / sizeof(float);
  return per_rank_blocks(opt->coll) ? count / (size_t)nranks : count;
}

/* Small integers only, so that float sums stay exact and any wrong element shows. */
static float allreduce_input(int rank, size_t i) { return (float)(rank + 1 + (int)(i % 13)); }
static float allgather_input(int rank, size_t i) { return (float)(rank * 7 + (int)(i % 1021)); }
static float alltoall_input(int from, int to, size_t i) {
  return (float)(((size_t)from * 31 + (size_t)to * 17 + i) % 4093);
}

/* A broadcast's buffer is `recv` on every rank: the root fills it, the others receive into it. */
static void fill_inputs(const struct Options* opt, float* send, float* recv, size_t block, int rank, int n) {
  switch (opt->coll) {
    case kAllreduce:
    case kReduce:
      for (size_t i = 0; i < block; i++) send[i] = allreduce_input(rank, i);
      break;
    case kReduceScatter:
      for (size_t i = 0; i < block * (size_t)n; i++) send[i] = allreduce_input(rank, i);
      break;
    case kBroadcast:
      if (rank == 0)
        for (size_t i = 0; i < block; i++) recv[i] = allgather_input(0, i);
      break;
    case kAllgather:
      for (size_t i = 0; i < block; i++) send[i] = allgather_input(rank, i);
      break;
    case kAlltoall:
      for (int to = 0; to < n; to++)
        for (size_t i = 0; i < block; i++)
          send[(size_t)to * block + i] = alltoall_input(rank, to, i);
      break;
  }
}

static long long count_wrong(const struct Options* opt, const float* recv, size_t block, int rank,
                             int n) {
  long long wrong = 0;
  switch (opt->coll) {
    case kAllreduce:
    case kReduce:
      if (opt->coll == kReduce && rank != 0) break; /* only the root receives */
      for (size_t i = 0; i < block; i++) {
        float want = (float)(n * (n + 1) / 2 + n * (int)(i % 13));
        wrong += recv[i] != want;
      }
      break;
    case kReduceScatter:
      for (size_t i = 0; i < block; i++) {
        size_t at = (size_t)rank * block + i; /* this rank's block of the reduced vector */
        float want = (float)(n * (n + 1) / 2 + n * (int)(at % 13));
        wrong += recv[i] != want;
      }
      break;
    case kBroadcast:
      for (size_t i = 0; i < block; i++) wrong += recv[i] != allgather_input(0, i);
      break;
    case kAllgather:
      for (int from = 0; from < n; from++)
        for (size_t i = 0; i < block; i++)
          wrong += recv[(size_t)from * block + i] != allgather_input(from, i);
      break;
    case kAlltoall:
      for (int from = 0; from < n; from++)
        for (size_t i = 0; i < block; i++)
          wrong += recv[(size_t)from * block + i] != alltoall_input(from, rank, i);
      break;
  }
  return wrong;
}

static void run_once(const struct Options* opt, const float* send, float* recv, size_t block) {
  int count = (int)block; /* parse_options keeps max_bytes / 4 within an int */
  switch (opt->coll) {
    case kAllreduce:
      MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      break;
    case kAllgather:
      MPI_Allgather(send, count, MPI_FLOAT, recv, count, MPI_FLOAT, MPI_COMM_WORLD);
      break;
    case kAlltoall:
      MPI_Alltoall(send, count, MPI_FLOAT, recv, count, MPI_FLOAT, MPI_COMM_WORLD);
      break;
    case kReduceScatter:
      MPI_Reduce_scatter_block(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      break;
    case kBroadcast:
      MPI_Bcast(recv, count, MPI_FLOAT, 0, MPI_COMM_WORLD);
      break;
    case kReduce:
      MPI_Reduce(send, recv, count, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
      break;
  }
}

static double bus_factor(enum Coll coll, int n) {
  if (coll == kBroadcast || coll == kReduce) return 1.0;
  return coll == kAllreduce ? 2.0 * (n - 1) / n : (double)(n - 1) / n;
}

static void print_header(const struct Options* opt, int n) {
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(version, &len);
  char* newline = strchr(version, '\n');
  if (newline != NULL) *newline = '\0';
  printf("# mpi_coll_bench %s  nranks %d  iters %d  warmup %d  (out-of-place)\n", opt->coll_name, n,
         opt->iters, opt->warmup);
  printf("# library: %s\n", version);
  printf("#%11s  %12s  %8s  %6s  %6s  %10s  %7s  %7s  %6s\n", "size", "count", "type", "redop",
         "root", "time", "algbw", "busbw", "#wrong");
  printf("#%11s  %12s  %8s  %6s  %6s  %10s  %7s  %7s  %6s\n", "(B)", "(elements)", "", "", "",
         "(us)", "(GB/s)", "(GB/s)", "");
  fflush(stdout);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);

  struct Options opt;
  if (parse_options(argc, argv, &opt) != 0) {
    if (rank == 0) usage(argv[0]);
    MPI_Finalize();
    return 2;
  }

  /* One allocation each, at the largest size, reused for the whole sweep. */
  size_t max_elems = opt.max_bytes / sizeof(float) + 1;
  float* send = NULL;
  float* recv = NULL;
  if (posix_memalign((void**)&send, 4096, max_elems * sizeof(float)) != 0 ||
      posix_memalign((void**)&recv, 4096, max_elems * sizeof(float)) != 0) {
    fprintf(stderr, "rank %d: cannot allocate 2 x %zu bytes\n", rank, opt.max_bytes);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  memset(send, 0, max_elems * sizeof(float));
  memset(recv, 0, max_elems * sizeof(float));

  FILE* json = NULL;
  if (rank == 0) {
    print_header(&opt, n);
    if (opt.json_path != NULL && (json = fopen(opt.json_path, "w")) == NULL) {
      fprintf(stderr, "cannot write %s: %s\n", opt.json_path, strerror(errno));
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }

  /* Start-up warmup, as nccl-tests does, at the largest and the smallest size; at least 32 calls
   * at the smallest, so that lazily set-up paths (Open MPI's vader switches to its fast boxes
   * after 16 messages to a peer) are in place before the first timed size. */
  {
    size_t largest = block_count(&opt, opt.max_bytes, n);
    size_t smallest = block_count(&opt, opt.min_bytes, n);
    for (int i = 0; i < opt.warmup && largest > 0; i++) run_once(&opt, send, recv, largest);
    for (int i = 0; i < (opt.warmup > 32 ? opt.warmup : 32) && smallest > 0; i++)
      run_once(&opt, send, recv, smallest);
  }

  long long total_wrong = 0;
  for (double size = (double)opt.min_bytes; size <= (double)opt.max_bytes * 1.0000001;
       size *= opt.factor) {
    size_t block = block_count(&opt, (size_t)size, n);
    if (block == 0) continue; /* fewer elements than ranks: nothing to move */
    size_t elems = per_rank_blocks(opt.coll) ? block * (size_t)n : block;
    size_t bytes = elems * sizeof(float);

    /* Check once per size, on a poisoned receive buffer. */
    memset(recv, 0xff, elems * sizeof(float));
    fill_inputs(&opt, send, recv, block, rank, n);
    run_once(&opt, send, recv, block);
    long long wrong = count_wrong(&opt, recv, block, rank, n);
    long long wrong_all = 0;
    MPI_Allreduce(&wrong, &wrong_all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    total_wrong += wrong_all;

    for (int i = 0; i < opt.warmup; i++) run_once(&opt, send, recv, block);
    MPI_Barrier(MPI_COMM_WORLD);
    double cpu_start = cpu_seconds();
    double start = MPI_Wtime();
    for (int i = 0; i < opt.iters; i++) run_once(&opt, send, recv, block);
    double average = (MPI_Wtime() - start) / opt.iters;
    double cpu = (cpu_seconds() - cpu_start) / opt.iters, cpu_all = 0;
    double slowest = 0;
    MPI_Reduce(&average, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&cpu, &cpu_all, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);

    if (rank == 0) {
      double time_us = slowest * 1e6;
      double algbw = (double)bytes / slowest / 1e9;
      double busbw = algbw * bus_factor(opt.coll, n);
      const int reduces = opt.coll == kAllreduce || opt.coll == kReduceScatter || opt.coll == kReduce;
      const char* redop = reduces ? "sum" : "none";
      const int root = opt.coll == kBroadcast || opt.coll == kReduce ? 0 : -1;
      printf("%12zu  %12zu  %8s  %6s  %6d  %10.2f  %7.2f  %7.2f  %6lld\n", bytes, block, "float", redop, root, time_us,
             algbw, busbw, wrong_all);
      fflush(stdout);
      if (json != NULL)
        fprintf(json,
                "{\"coll\":\"%s\",\"bytes\":%zu,\"count\":%zu,\"type\":\"f32\",\"ranks\":%d,"
                "\"iters\":%d,\"oop_time_us\":%.3f,\"oop_algbw\":%.6g,\"oop_busbw\":%.6g,"
                "\"oop_cpu_us\":%.3f,\"ip_time_us\":null,\"ip_algbw\":null,\"ip_busbw\":null,\"wrong\":%lld}\n",
                opt.coll_name, bytes, block, n, opt.iters, time_us, algbw, busbw, cpu_all * 1e6, wrong_all);
    }
  }
  if (rank == 0) {
    printf("# total #wrong: %lld\n", total_wrong);
    if (json != NULL) fclose(json);
  }
  free(send);
  free(recv);
  MPI_Finalize();
  return total_wrong == 0 ? 0 : 1;
}
