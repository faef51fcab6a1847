// Where a process learns its place in the job: TIERCC_* variables first, then Open MPI's and
// torchrun's, so that tiercc runs under tiercc-run, mpirun and torchrun alike.
#pragma once

#include <string>

namespace tiercc {

struct LaunchEnv {
  std::string storeAddr;  ///< host:port of the bootstrap store
  int rank = -1;
  int worldSize = -1;
  std::string source;     ///< which variables were used, for messages and tiercc-info
};

/// Reads the launch environment; InvalidArgument saying which variable is malformed or, when
/// `complete`, missing. Otherwise what is missing stays unset (rank -1, empty storeAddr): a
/// PMIx launcher may tell the rest.
LaunchEnv readLaunchEnv(bool complete = true);

}  // namespace tiercc
