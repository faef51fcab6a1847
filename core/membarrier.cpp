// membarrier(2) wrappers (see membarrier.hpp). glibc has no wrapper: the raw system call.
#include "core/membarrier.hpp"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>

#include "core/log.hpp"

namespace tiercc::membarrier {

namespace {
long call(int cmd) { return syscall(SYS_membarrier, cmd, 0, 0); }

bool registerNow() {
  const long offered = call(MEMBARRIER_CMD_QUERY);
  const long needed = MEMBARRIER_CMD_GLOBAL_EXPEDITED | MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED;
  if (offered < 0 || (offered & needed) != needed) {
    TIERCC_LOG(Info, Init) << "membarrier: not used (its global expedited barrier is not offered here: "
                           << (offered < 0 ? std::strerror(errno) : "the kernel lacks it") << ")";
    return false;
  }
  if (call(MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) != 0) {
    TIERCC_LOG(Info, Init) << "membarrier: not used (registration failed: " << std::strerror(errno) << ")";
    return false;
  }
  return true;
}
}  // namespace

// Per process: a child forked after the parent registered registers itself again (the call is
// idempotent), rather than trusting what it inherited.
bool registerProcess() {
  static std::mutex mutex;
  static pid_t registeredPid = 0;
  static bool registered = false;
  std::lock_guard<std::mutex> lock(mutex);
  if (registeredPid != getpid()) {
    registered = registerNow();
    registeredPid = getpid();
  }
  return registered;
}

// Once registered the call fails only on a bad command: if it ever does, it says so once, with
// what its users lose, rather than each user keeping its own warning.
void fenceEveryRegisteredProcess() {
  if (call(MEMBARRIER_CMD_GLOBAL_EXPEDITED) == 0) return;
  static std::atomic<bool> logged{false};
  if (logged.exchange(true)) return;
  TIERCC_LOG(Warn, Init) << "membarrier failed after registration (" << std::strerror(errno)
                         << "): a shm signal that races a sleep is seen after the wait's slice, not at once, and "
                            "statistics read meanwhile may be torn";
}

}  // namespace tiercc::membarrier
