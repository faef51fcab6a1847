// tiercc/mpi.hpp under a real mpirun: communicators made from MPI_COMM_WORLD and from a split
// of it keep MPI's ranks and sizes, and their collectives agree with MPI's own. Exit 0 when
// every check on every rank passed (tests/mpi/run.sh runs it).
#include <mpi.h>

#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include "tiercc/mpi.hpp"

namespace {

int failures = 0;

void check(bool ok, int rank, const std::string& what) {
  if (ok) return;
  ++failures;
  std::fprintf(stderr, "rank %d: check failed: %s\n", rank, what.c_str());
}

// Integer-valued doubles: exact in any order, so tiercc's sum must equal MPI's bit for bit.
void compareWithMpi(tiercc::Communicator& comm, MPI_Comm mpi, const char* name) {
  int rank = 0, size = 0;
  MPI_Comm_rank(mpi, &rank);
  MPI_Comm_size(mpi, &size);
  check(comm.rank() == rank && comm.size() == size, rank,
        std::string(name) + ": tiercc has rank " + std::to_string(comm.rank()) + " of " + std::to_string(comm.size()) +
            ", MPI " + std::to_string(rank) + " of " + std::to_string(size));
  for (std::size_t count : {std::size_t{1}, std::size_t{1000}, std::size_t{1} << 20}) {
    std::vector<double> send(count), ours(count), theirs(count);
    for (std::size_t i = 0; i < count; ++i) send[i] = static_cast<double>((i * 31 + rank * 7) % 1000);
    comm.allreduce(send.data(), ours.data(), count, tiercc::DataType::F64, tiercc::ReduceOp::Sum);
    MPI_Allreduce(send.data(), theirs.data(), static_cast<int>(count), MPI_DOUBLE, MPI_SUM, mpi);
    check(ours == theirs, rank, std::string(name) + ": allreduce of " + std::to_string(count) + " differs from MPI's");
    std::vector<double> gathered(count * size), mpiGathered(count * size);
    comm.allgather(send.data(), gathered.data(), count, tiercc::DataType::F64);
    MPI_Allgather(send.data(), static_cast<int>(count), MPI_DOUBLE, mpiGathered.data(), static_cast<int>(count),
                  MPI_DOUBLE, mpi);
    check(gathered == mpiGathered, rank, std::string(name) + ": allgather of " + std::to_string(count) + " differs");
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  try {
    tiercc::Communicator world = tiercc::communicatorFromMpi(MPI_COMM_WORLD);
    compareWithMpi(world, MPI_COMM_WORLD, "world");
    // Odd and even ranks, in reverse order: rank 0 of each half is MPI's, not the world's.
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &half);
    {
      tiercc::Communicator part = tiercc::communicatorFromMpi(half);
      compareWithMpi(part, half, "half");
      world.barrier();  // both in use at once
    }
    MPI_Comm_free(&half);
    if (rank == 0)
      std::printf("from_mpi_comm: %d ranks, %d domains: world and split communicators agree with MPI\n", size,
                  world.numDomains());
  } catch (const tiercc::Error& e) {
    std::fprintf(stderr, "rank %d: %s\n", rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  return all == 0 ? 0 : 1;
}
