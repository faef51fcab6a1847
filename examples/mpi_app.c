/* An MPI program that uses tiercc for its collectives, by NCCL's pattern: rank 0 makes a
 * unique id, MPI_Bcast hands it to every rank, and each joins with tiercc_comm_init_rank_id.
 * No tiercc variable is needed. The work is data-parallel SGD on a linear model: each rank
 * draws its own shard of synthetic samples, computes its gradient, and tiercc averages the
 * gradients (allreduce), so every rank takes the same step.
 *
 * Run: mpirun -n 4 build/bin/mpi_app   (add --oversubscribe with more ranks than cores) */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "tiercc/tiercc.h"

#define FEATURES 16
#define SAMPLES_PER_RANK 512
#define STEPS 60

#define CHECK(call)                                                                                     \
  do {                                                                                                  \
    tiercc_result_t r_ = (call);                                                                        \
    if (r_ != tiercc_success) {                                                                         \
      fprintf(stderr, "%s failed: %s: %s\n", #call, tiercc_result_string(r_), tiercc_get_last_error()); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                                     \
    }                                                                                                   \
  } while (0)

/* A small deterministic generator, so that every run draws the same data. */
static double next_uniform(unsigned long long* state) {
  *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(*state >> 11) / 9007199254740992.0 - 0.5;
}

/* Mean squared error of w over this rank's shard, and its gradient (summed, not averaged). */
static double loss_and_gradient(const double* x, const double* y, const double* w, double* grad) {
  double loss = 0;
  for (int j = 0; j < FEATURES; ++j) grad[j] = 0;
  for (int i = 0; i < SAMPLES_PER_RANK; ++i) {
    double err = -y[i];
    for (int j = 0; j < FEATURES; ++j) err += x[i * FEATURES + j] * w[j];
    loss += err * err;
    for (int j = 0; j < FEATURES; ++j) grad[j] += 2 * err * x[i * FEATURES + j];
  }
  return loss;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  /* NCCL's pattern: rank 0 makes the id, MPI hands it out. */
  tiercc_unique_id id;
  if (rank == 0) CHECK(tiercc_get_unique_id(&id));
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  tiercc_comm_t comm;
  CHECK(tiercc_comm_init_rank_id(&comm, size, id, rank));
  int domains = 0;
  CHECK(tiercc_comm_num_domains(comm, &domains));

  /* This rank's shard: y = x . w_true + noise, with w_true the same everywhere. */
  static double x[SAMPLES_PER_RANK * FEATURES], y[SAMPLES_PER_RANK];
  double w_true[FEATURES], w[FEATURES] = {0}, grad[FEATURES];
  unsigned long long truth = 42, mine = 1000 + (unsigned long long)rank;
  for (int j = 0; j < FEATURES; ++j) w_true[j] = 4 * next_uniform(&truth);
  for (int i = 0; i < SAMPLES_PER_RANK; ++i) {
    y[i] = 0.01 * next_uniform(&mine);
    for (int j = 0; j < FEATURES; ++j) {
      x[i * FEATURES + j] = next_uniform(&mine);
      y[i] += x[i * FEATURES + j] * w_true[j];
    }
  }

  const double samples = (double)SAMPLES_PER_RANK * size, rate = 1.5;
  double first_loss = 0, loss = 0;
  for (int step = 0; step < STEPS; ++step) {
    double local = loss_and_gradient(x, y, w, grad);
    /* The gradient and the loss travel together: one allreduce per step. */
    double sums[FEATURES + 1];
    for (int j = 0; j < FEATURES; ++j) sums[j] = grad[j];
    sums[FEATURES] = local;
    CHECK(tiercc_allreduce(sums, sums, FEATURES + 1, tiercc_f64, tiercc_sum, comm));
    loss = sums[FEATURES] / samples;
    if (step == 0) first_loss = loss;
    for (int j = 0; j < FEATURES; ++j) w[j] -= rate * sums[j] / samples;
  }

  /* Every rank must hold the same model: the largest and smallest of each weight agree. */
  double hi[FEATURES], lo[FEATURES];
  CHECK(tiercc_allreduce(w, hi, FEATURES, tiercc_f64, tiercc_max, comm));
  CHECK(tiercc_allreduce(w, lo, FEATURES, tiercc_f64, tiercc_min, comm));
  int same = 1;
  double off = 0;
  for (int j = 0; j < FEATURES; ++j) {
    same = same && hi[j] == lo[j];
    off = fmax(off, fabs(w[j] - w_true[j]));
  }
  /* And tiercc's sum equals MPI's for what is exact in any order: integers in doubles. */
  double ours = rank + 1, theirs = 0;
  CHECK(tiercc_allreduce(&ours, &ours, 1, tiercc_f64, tiercc_sum, comm));
  MPI_Allreduce(&(double){rank + 1}, &theirs, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);

  const int ok = same && loss < first_loss / 100 && off < 0.05 && ours == theirs;
  if (rank == 0)
    printf(
        "mpi_app: %d ranks in %d domains, %d SGD steps: loss %.3g -> %.3g, max |w - w_true| %.3g, "
        "models %s, tiercc sum %g = MPI sum %g: %s\n",
        size, domains, STEPS, first_loss, loss, off, same ? "identical" : "DIFFER", ours, theirs, ok ? "ok" : "FAILED");
  CHECK(tiercc_comm_destroy(comm));
  int all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  MPI_Finalize();
  return all_ok ? 0 : 1;
}
