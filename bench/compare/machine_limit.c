/* bench/compare/machine_limit.c: what one core of this host can move, for the "machine limit"
 * line of bench/compare/run.sh. Single thread, buffers of -s bytes (default 64 MiB, beyond the
 * caches), each kernel run -n times (default 10) after one untimed pass; the best run counts.
 *   memcpy:  c = a (glibc memcpy)                  GB/s = bytes of c written per second
 *   add:     c = a + b, f32 (vectorised loop)      GB/s = bytes of c written per second
 * Prints one JSON object. 10^9 B/s, like every bandwidth in docs/performance.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void add(float* restrict c, const float* restrict a, const float* restrict b, size_t n) {
  for (size_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
}

int main(int argc, char** argv) {
  size_t bytes = (size_t)64 << 20;
  int runs = 10;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "-s")) bytes = strtoull(argv[i + 1], NULL, 10);
    else if (!strcmp(argv[i], "-n")) runs = atoi(argv[i + 1]);
  }
  size_t n = bytes / sizeof(float);
  float *a = malloc(n * sizeof(float)), *b = malloc(n * sizeof(float)), *c = malloc(n * sizeof(float));
  if (!a || !b || !c) return 1;
  for (size_t i = 0; i < n; ++i) a[i] = (float)(i % 7), b[i] = (float)(i % 5), c[i] = 0;
  double bestCopy = 1e30, bestAdd = 1e30;
  for (int r = -1; r < runs; ++r) {
    double t0 = now();
    memcpy(c, a, n * sizeof(float));
    double t1 = now();
    add(c, a, b, n);
    double t2 = now();
    if (r >= 0 && t1 - t0 < bestCopy) bestCopy = t1 - t0;
    if (r >= 0 && t2 - t1 < bestAdd) bestAdd = t2 - t1;
  }
  double copy = (double)(n * sizeof(float)) / bestCopy / 1e9, sum = (double)(n * sizeof(float)) / bestAdd / 1e9;
  /* Two ranks, each on its own core: two-shot allreduce reduces S/2 (a + b -> c) and copies
   * S/2 per rank, so its busbw (= S / time for 2 ranks) is at most 2 / (1/add + 1/memcpy). */
  printf("{\"bytes\":%zu,\"memcpy_GBps\":%.2f,\"add_GBps\":%.2f,\"allreduce2_limit_GBps\":%.2f,\"check\":%g}\n", bytes,
         copy, sum, 2.0 / (1.0 / copy + 1.0 / sum), (double)c[n - 1]);
  free(a), free(b), free(c);
  return 0;
}
