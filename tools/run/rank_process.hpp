// RankProcess: one rank started with fork+exec in its own process group, with its stdout and
// stderr either captured through pipes or inherited from the launcher.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <string>
#include <vector>

#include "tools/run/unique_fd.hpp"

namespace tiercc::run {

struct RankProcess {
  int rank = 0;
  int domain = 0;
  pid_t pid = -1;  ///< also the process group id
  bool running = false;
  int waitStatus = 0;   ///< from waitpid, once !running
  UniqueFd stdoutPipe;  ///< read ends, non-blocking; invalid when not captured or at EOF
  UniqueFd stderrPipe;
};

struct RankSpawn {
  int rank = 0;
  int domain = 0;
  std::vector<std::string> command;      ///< program then arguments; the program is looked up in PATH
  std::vector<std::string> environment;  ///< "NAME=value" entries
  bool captureOutput = true;
  const sigset_t* childSignalMask = nullptr;  ///< restored in the child before exec
  std::string netnsPath;  ///< "/run/netns/<name>": the child enters this network namespace; empty: stays
};

/// Starts the rank. A program that cannot be executed makes the rank print
/// "tiercc-run: cannot run 'prog': <reason>" on its stderr and exit 127 (likewise
/// "cannot enter network namespace" when setns fails).
/// Error{SystemError} when the launcher itself cannot create pipes, open netnsPath or fork.
RankProcess spawnRank(const RankSpawn& spawn);

/// Sends sig to the rank's whole process group, so helpers a rank forked (e.g. a shell's
/// children, which hold its output pipes) stop with it. Missing groups are ignored.
void signalRankGroup(const RankProcess& rank, int sig);

}  // namespace tiercc::run
