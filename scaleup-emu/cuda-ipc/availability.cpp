// Whether the cuda-ipc backend can run here (cudaIpcUnavailableReason, declared in
// cuda_ipc_allreduce.hpp). The probe initialises CUDA, and a process that has initialised CUDA
// cannot use it in children it forks afterwards; so the probe runs in a child of its own and
// only its answer comes back, through a pipe.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "core/errors.hpp"
#include "scaleup-emu/cuda-ipc/cuda_ipc_allreduce.hpp"

namespace tiercc {
namespace {

std::string cudaWords(const char* call, cudaError_t err) {
  return concat(call, ": ", cudaGetErrorName(err), " (", cudaGetErrorString(err), ")");
}

// Runs in the child: the reason, or "" when usable.
std::string probe(int ranks) {
  int driver = 0;
  if (cudaDriverGetVersion(&driver) != cudaSuccess || driver == 0)
    return "no NVIDIA driver (libcuda.so.1 not found): the CUDA toolkit alone cannot run kernels";
  int devices = 0;
  if (cudaError_t err = cudaGetDeviceCount(&devices); err != cudaSuccess)
    return concat("no usable CUDA device: ", cudaWords("cudaGetDeviceCount", err));
  if (devices == 0) return "no CUDA device on this host";
  int uva = 0;
  int mode = 0;
  if (cudaError_t err = cudaDeviceGetAttribute(&uva, cudaDevAttrUnifiedAddressing, 0); err != cudaSuccess)
    return cudaWords("cudaDeviceGetAttribute(UnifiedAddressing)", err);
  if (!uva) return "device 0 has no unified addressing, which CUDA IPC needs";
  if (cudaError_t err = cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, 0); err != cudaSuccess)
    return cudaWords("cudaDeviceGetAttribute(ComputeMode)", err);
  if (mode == cudaComputeModeProhibited) return "device 0 is in compute-prohibited mode";
  if (mode == cudaComputeModeExclusiveProcess && devices < ranks)
    return concat("devices are exclusive-process and there are ", devices, " for ", ranks,
                  " ranks (one process per device)");
  // Exporting a handle is what fails where IPC is unsupported (some virtualised setups).
  void* p = nullptr;
  if (cudaError_t err = cudaMalloc(&p, 1 << 20); err != cudaSuccess) return cudaWords("cudaMalloc", err);
  cudaIpcMemHandle_t handle{};
  cudaError_t err = cudaIpcGetMemHandle(&handle, p);
  cudaFree(p);
  if (err != cudaSuccess) return concat("CUDA IPC unsupported here: ", cudaWords("cudaIpcGetMemHandle", err));
  return {};
}

void writeAll(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

std::string probeInChild(int ranks) {
  int fds[2];
  if (::pipe(fds) != 0) return concat("cannot probe CUDA: pipe: ", std::strerror(errno));
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return concat("cannot probe CUDA: fork: ", std::strerror(errno));
  }
  if (pid == 0) {
    ::close(fds[0]);
    ::alarm(60);  // a wedged driver must not hang the caller
    std::string reason;
    try {
      reason = probe(ranks);
    } catch (const std::exception& e) {
      reason = e.what();
    }
    writeAll(fds[1], "R" + reason);  // the marker tells "usable" from "the child died silently"
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string out;
  char buf[512];
  while (true) {
    ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (out.empty() || out[0] != 'R') {
    if (WIFSIGNALED(status)) return concat("the CUDA probe process was killed by signal ", WTERMSIG(status));
    return concat("the CUDA probe process exited with status ", WEXITSTATUS(status), " and no answer");
  }
  return out.substr(1);
}

}  // namespace

std::string cudaIpcUnavailableReason(int ranks) {
  static std::mutex mutex;
  static std::map<int, std::string> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(ranks);
  if (it == cache.end()) it = cache.emplace(ranks, probeInChild(ranks)).first;
  return it->second;
}

}  // namespace tiercc
