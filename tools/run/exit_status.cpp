// How a rank ended, in words and as the launcher's exit code.
// Uses glibc's sigabbrev_np so the names match what `kill -l` prints.
#include "tools/run/exit_status.hpp"

#include <sys/wait.h>

#include <cstring>

#include "core/errors.hpp"

namespace tiercc::run {

std::string signalName(int signal) {
  const char* abbrev = sigabbrev_np(signal);
  if (abbrev == nullptr) return concat("signal ", signal);
  return concat("SIG", abbrev);
}

std::string describeWaitStatus(int status) {
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    return concat("was killed by signal ", sig, " (", signalName(sig), ")");
  }
  return concat("exited with code ", WEXITSTATUS(status));
}

int exitCodeOf(int status) {
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

bool isFailure(int status) { return !WIFEXITED(status) || WEXITSTATUS(status) != 0; }

}  // namespace tiercc::run
