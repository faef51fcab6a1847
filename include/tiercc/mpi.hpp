// Header-only: a tiercc Communicator of the ranks of an MPI communicator, by NCCL's pattern
// (one rank makes a unique id, MPI_Bcast hands it to the others). Include it where <mpi.h> is
// available; libtiercc itself does not link MPI.
#pragma once

#include <mpi.h>

#include <string>

#include "tiercc/tiercc.hpp"

namespace tiercc {

/// Collective over `comm`: every rank of it calls this, and gets a Communicator with the same
/// ranks in the same order (rank r of comm is rank r here). Rank 0 hosts the bootstrap store
/// (UniqueId::create), so it must outlive the others' use of the result. If rank 0 cannot make
/// the id, it throws that error and every other rank InvalidArgument (it received no id); an
/// MPI call that fails throws SystemError naming it.
inline Communicator communicatorFromMpi(MPI_Comm comm) {
  auto mpiCheck = [](int code, const char* call) {
    if (code == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING] = {};
    int length = 0;
    MPI_Error_string(code, text, &length);
    throw Error(ErrorCode::SystemError, std::string("communicatorFromMpi: ") + call + " failed: " + text);
  };
  int rank = 0, size = 0;
  mpiCheck(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  mpiCheck(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  UniqueId id;  // all zeros unless rank 0 makes one: the others then refuse it, saying why
  std::string makeError;
  ErrorCode makeCode = ErrorCode::SystemError;
  if (rank == 0) {
    try {
      id = UniqueId::create();
    } catch (const Error& e) {
      makeError = e.what();
      makeCode = e.code();
    }
  }
  mpiCheck(MPI_Bcast(id.bytes.data(), static_cast<int>(id.bytes.size()), MPI_BYTE, 0, comm), "MPI_Bcast");
  if (!makeError.empty()) throw Error(makeCode, makeError);
  return Communicator(id, size, rank);
}

}  // namespace tiercc
