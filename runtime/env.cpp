// Launch environment resolution (see env.hpp). Precedence: TIERCC_*, then OMPI_COMM_WORLD_*,
// then torchrun's RANK/WORLD_SIZE. torchrun's MASTER_PORT belongs to PyTorch's own store, so
// tiercc's store uses the next port, MASTER_PORT+1 (hosted by rank 0).
#include "runtime/env.hpp"

#include <cstdlib>
#include <string>

#include "core/errors.hpp"

namespace tiercc {
namespace {

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

int parseNonNegative(const char* name, const char* text) {
  char* end = nullptr;
  errno = 0;
  long v = std::strtol(text, &end, 10);
  if (*end != '\0' || errno == ERANGE || v < 0 || v > (1 << 24))
    fail(ErrorCode::InvalidArgument, name, "='", text, "' is not a valid non-negative integer");
  return static_cast<int>(v);
}

}  // namespace

LaunchEnv readLaunchEnv(bool complete) {
  LaunchEnv out;
  struct Pair { const char* rank; const char* size; };
  const Pair kSources[] = {{"TIERCC_RANK", "TIERCC_WORLD_SIZE"},
                           {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                           {"RANK", "WORLD_SIZE"}};
  for (const Pair& p : kSources) {
    if (env(p.rank) && env(p.size)) {
      out.rank = parseNonNegative(p.rank, env(p.rank));
      out.worldSize = parseNonNegative(p.size, env(p.size));
      out.source = std::string(p.rank) + "/" + p.size;
      break;
    }
  }
  if (out.rank < 0 && complete)
    fail(ErrorCode::InvalidArgument,
         "cannot tell this process's rank: set TIERCC_RANK and TIERCC_WORLD_SIZE (or run under "
         "tiercc-run, mpirun or torchrun)");
  if (out.rank >= 0 && (out.worldSize < 1 || out.rank >= out.worldSize))
    fail(ErrorCode::InvalidArgument, "rank ", out.rank, " is not in [0, ", out.worldSize, ") (from ",
         out.source, ")");

  if (const char* store = env("TIERCC_STORE")) {
    out.storeAddr = store;
  } else if (env("MASTER_ADDR") && env("MASTER_PORT")) {
    int port = parseNonNegative("MASTER_PORT", env("MASTER_PORT"));
    if (port < 1 || port >= 65535)
      fail(ErrorCode::InvalidArgument, "MASTER_PORT='", env("MASTER_PORT"), "' is not a usable port");
    out.storeAddr = std::string(env("MASTER_ADDR")) + ":" + std::to_string(port + 1);
    out.source += ", store at MASTER_ADDR:MASTER_PORT+1";
  } else if (complete) {
    fail(ErrorCode::InvalidArgument,
         "no bootstrap store: set TIERCC_STORE=host:port (tiercc-run sets it) or MASTER_ADDR and "
         "MASTER_PORT, or start under a PMIx launcher (mpirun, srun --mpi=pmix)");
  }
  return out;
}

}  // namespace tiercc
