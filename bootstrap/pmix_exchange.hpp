// Starting under a PMIx launcher (Open MPI's mpirun, Slurm's srun --mpi=pmix) with no tiercc
// variables: PMIx says where this process is in the job, and carries one value from rank 0 to
// every rank (put, commit, a fence that collects the data, get). libpmix is optional at build
// time (TIERCC_WITH_PMIX); without it, startedUnderPmix() still tells a user why nothing works.
#pragma once

#include <chrono>
#include <functional>
#include <string>

namespace tiercc {

/// Whether a PMIx server started this process (it exported PMIX_NAMESPACE).
bool startedUnderPmix();
/// Whether this build speaks PMIx (libpmix-dev found at build time).
bool pmixBuiltIn();

struct PmixPlace {
  int rank = -1;
  int size = 0;
  int localRank = -1;  ///< on its node; -1: the server did not say
  std::string nspace;
};

/// Joins the PMIx job, reads this process's place, and makes `rank0Value()` (called on rank 0
/// only) reach every rank in `value`; every rank of the namespace must call it, in the same
/// order. Each wait ends after `timeout`. PMIx is finalized again before it returns, so the
/// launcher sees a clean exit. SystemError naming the PMIx call and status on failure;
/// NotSupported in a build without PMIx.
PmixPlace pmixShareFromRank0(const std::function<std::string()>& rank0Value, std::string& value,
                             std::chrono::milliseconds timeout);

}  // namespace tiercc
