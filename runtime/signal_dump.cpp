// The SIGUSR1 dump (see signal_dump.hpp).
#include "runtime/signal_dump.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <mutex>
#include <thread>

#include "core/log.hpp"

namespace tiercc {
namespace {

struct Registry {
  std::mutex mutex;  // held while dumping: unregistering waits for a dump in progress
  std::map<int, std::function<void()>> dumps;
  int next = 1;
  int pipe[2] = {-1, -1};
  pid_t installedIn = 0;  // a forked child has no signal thread: it installs its own
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: the signal thread may outlive main()
  return *r;
}

void onSignal(int) {
  const int saved = errno;
  const char byte = 1;
  [[maybe_unused]] ssize_t n = ::write(registry().pipe[1], &byte, 1);  // async-signal-safe
  errno = saved;
}

void signalThread(int readEnd) {
  char byte;
  while (true) {
    const ssize_t n = ::read(readEnd, &byte, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    for (auto& [handle, dump] : r.dumps) {
      try {
        dump();
      } catch (const std::exception& e) {
        TIERCC_LOG(Warn, Init) << "SIGUSR1: flight recorder dump failed: " << e.what();
      }
    }
  }
}

// Called with the registry's lock held.
void install(Registry& r) {
  if (r.installedIn == ::getpid()) return;
  r.installedIn = ::getpid();
  if (r.pipe[0] >= 0) {  // the parent's, inherited by fork()
    ::close(r.pipe[0]);
    ::close(r.pipe[1]);
    r.pipe[0] = r.pipe[1] = -1;
  }
  r.dumps.clear();
  struct sigaction current {};
  if (::sigaction(SIGUSR1, nullptr, &current) != 0 || (current.sa_handler != SIG_DFL && current.sa_handler != onSignal))
    return;
  if (::pipe2(r.pipe, O_CLOEXEC | O_NONBLOCK) != 0) return;
  // The read end blocks: the thread sleeps until a signal comes.
  ::fcntl(r.pipe[0], F_SETFL, ::fcntl(r.pipe[0], F_GETFL) & ~O_NONBLOCK);
  std::thread(signalThread, r.pipe[0]).detach();
  struct sigaction action {};
  action.sa_handler = onSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  ::sigaction(SIGUSR1, &action, nullptr);
}

}  // namespace

int onDumpSignal(std::function<void()> dump) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  install(r);
  const int handle = r.next++;
  r.dumps.emplace(handle, std::move(dump));
  return handle;
}

void offDumpSignal(int handle) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.dumps.erase(handle);
}

}  // namespace tiercc
