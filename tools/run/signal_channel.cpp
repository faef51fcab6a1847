// SignalChannel: SIGCHLD, SIGINT and SIGTERM delivered as readable events on a signalfd.
// signalfd rather than a self-pipe: no handler runs, so nothing async-signal-unsafe can happen.
#include "tools/run/signal_channel.hpp"

#include <sys/signalfd.h>

#include <cerrno>

#include "core/errors.hpp"

namespace tiercc::run {

SignalChannel::SignalChannel() {
  // An inherited SIG_IGN for SIGCHLD would make the kernel reap ranks before we can see their status.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  ::sigaction(SIGCHLD, &dfl, nullptr);

  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGCHLD);
  // An interrupt the launcher was started ignoring (nohup, `cmd &` in a script) stays ignored,
  // as it does for the ranks, which inherit the disposition. Linux would still queue it when blocked.
  for (int sig : {SIGINT, SIGTERM}) {
    struct sigaction current {};
    if (::sigaction(sig, nullptr, &current) == 0 && current.sa_handler == SIG_IGN) continue;
    sigaddset(&mask, sig);
  }
  if (int rc = ::pthread_sigmask(SIG_BLOCK, &mask, &originalMask_); rc != 0) failErrno("pthread_sigmask", rc);
  fd_.reset(::signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK));
  if (!fd_.valid()) failErrno("signalfd");
}

SignalChannel::~SignalChannel() { ::pthread_sigmask(SIG_SETMASK, &originalMask_, nullptr); }

std::vector<int> SignalChannel::readPending() {
  std::vector<int> signals;
  signalfd_siginfo info[16];
  while (true) {
    ssize_t n = ::read(fd_.get(), info, sizeof info);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) break;
      failErrno("read(signalfd)");
    }
    if (n == 0) break;
    for (std::size_t i = 0; i < static_cast<std::size_t>(n) / sizeof(signalfd_siginfo); ++i) {
      signals.push_back(static_cast<int>(info[i].ssi_signo));
    }
  }
  return signals;
}

}  // namespace tiercc::run
