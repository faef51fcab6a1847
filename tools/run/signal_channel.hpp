// SignalChannel: SIGCHLD, SIGINT and SIGTERM delivered as readable events on a signalfd,
// so the launcher waits for output, child exits and interrupts in one poll() call.
#pragma once

#include <signal.h>

#include <vector>

#include "tools/run/unique_fd.hpp"

namespace tiercc::run {

class SignalChannel {
 public:
  /// Blocks the signals in the calling thread. Create it before starting any thread (the store
  /// server) so every thread inherits the mask and no signal is delivered the default way.
  SignalChannel();
  ~SignalChannel();
  SignalChannel(const SignalChannel&) = delete;
  SignalChannel& operator=(const SignalChannel&) = delete;

  int fd() const { return fd_.get(); }
  /// The signal mask the launcher started with; children restore it before exec.
  const sigset_t& originalMask() const { return originalMask_; }
  /// Reads every pending signal (non-blocking); empty when none.
  std::vector<int> readPending();

 private:
  sigset_t originalMask_;
  UniqueFd fd_;
};

}  // namespace tiercc::run
