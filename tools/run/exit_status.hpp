// How a rank ended, in words and as the launcher's exit code.
// Shell convention: a process killed by signal S counts as exit code 128+S.
#pragma once

#include <string>

namespace tiercc::run {

/// "SIGSEGV" for 11; "signal 64" style fallback for signals without a name.
std::string signalName(int signal);

/// "exited with code 2" or "was killed by signal 11 (SIGSEGV)", from a waitpid() status.
std::string describeWaitStatus(int status);

/// The exit code a shell would report for a waitpid() status: the code, or 128+signal.
int exitCodeOf(int status);

/// True when the status is anything but a normal exit with code 0.
bool isFailure(int status);

}  // namespace tiercc::run
