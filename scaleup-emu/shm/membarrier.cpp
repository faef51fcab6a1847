// membarrier(2) wrappers (see membarrier.hpp). glibc has no wrapper: the raw system call.
#include "scaleup-emu/shm/membarrier.hpp"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/log.hpp"

namespace tiercc::membarrier {

namespace {
long call(int cmd) { return syscall(SYS_membarrier, cmd, 0, 0); }
}  // namespace

bool registerProcess() {
  static const bool registered = [] {
    const long offered = call(MEMBARRIER_CMD_QUERY);
    const long needed = MEMBARRIER_CMD_GLOBAL_EXPEDITED | MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED;
    if (offered < 0 || (offered & needed) != needed) {
      TIERCC_LOG(Info, Init) << "shm signals: fenced (membarrier's global expedited barrier is not offered here: "
                             << (offered < 0 ? std::strerror(errno) : "the kernel lacks it") << ")";
      return false;
    }
    if (call(MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) != 0) {
      TIERCC_LOG(Info, Init) << "shm signals: fenced (membarrier registration failed: " << std::strerror(errno) << ")";
      return false;
    }
    return true;
  }();
  return registered;
}

bool fenceEveryRegisteredProcess() { return call(MEMBARRIER_CMD_GLOBAL_EXPEDITED) == 0; }

}  // namespace tiercc::membarrier
