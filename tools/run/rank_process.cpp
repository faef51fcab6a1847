// RankProcess: one rank started with fork+exec in its own process group.
// The launcher runs the store server thread, so between fork and exec the child only makes
// async-signal-safe calls: everything it needs is prepared before fork.
#include "tools/run/rank_process.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/errors.hpp"

namespace tiercc::run {
namespace {

std::vector<char*> pointersTo(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const auto& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// Appends text to buf (capacity cap) without allocating; for use in the forked child.
void appendRaw(char* buf, std::size_t& len, std::size_t cap, const char* text) {
  while (*text != '\0' && len + 1 < cap) buf[len++] = *text++;
}

// Writes "tiercc-run: <what> '<name>': <reason>" to stderr and exits 127; safe after fork.
[[noreturn]] void childFailed(const char* what, const char* name, int err) {
  char buf[512];
  std::size_t len = 0;
  const char* reason = strerrordesc_np(err);
  appendRaw(buf, len, sizeof buf, "tiercc-run: ");
  appendRaw(buf, len, sizeof buf, what);
  appendRaw(buf, len, sizeof buf, " '");
  appendRaw(buf, len, sizeof buf, name);
  appendRaw(buf, len, sizeof buf, "': ");
  appendRaw(buf, len, sizeof buf, reason != nullptr ? reason : "unknown error");
  buf[len++] = '\n';
  ssize_t ignored = ::write(STDERR_FILENO, buf, len);
  (void)ignored;
  ::_exit(127);
}

[[noreturn]] void runChild(const RankSpawn& spawn, int stdoutWrite, int stderrWrite, int netnsFd,
                           char* const* argv, char* const* envp) {
  ::setpgid(0, 0);
  // Ranks never read the terminal: in their own process groups they would be stopped by SIGTTIN.
  int devNull = ::open("/dev/null", O_RDONLY);
  if (devNull >= 0) ::dup2(devNull, STDIN_FILENO);
  if (stdoutWrite >= 0) ::dup2(stdoutWrite, STDOUT_FILENO);
  if (stderrWrite >= 0) ::dup2(stderrWrite, STDERR_FILENO);
  // Before close_range, which closes netnsFd; after the dup2s, so a failure reaches the rank's stderr.
  if (netnsFd >= 0 && ::setns(netnsFd, CLONE_NEWNET) != 0) {
    childFailed("cannot enter network namespace", spawn.netnsPath.c_str(), errno);
  }
  // The store server's sockets and other ranks' pipes must not outlive the launcher in a rank.
  ::syscall(SYS_close_range, 3U, ~0U, 0U);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  ::sigaction(SIGPIPE, &dfl, nullptr);  // the launcher ignores it; programs expect the default
  if (spawn.childSignalMask != nullptr) ::sigprocmask(SIG_SETMASK, spawn.childSignalMask, nullptr);
  ::execvpe(argv[0], argv, envp);
  childFailed("cannot run", argv[0], errno);
}

void makePipe(UniqueFd& readEnd, UniqueFd& writeEnd) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) failErrno("pipe2");
  readEnd.reset(fds[0]);
  writeEnd.reset(fds[1]);
  if (::fcntl(readEnd.get(), F_SETFL, O_NONBLOCK) != 0) failErrno("fcntl(O_NONBLOCK)");
}

}  // namespace

RankProcess spawnRank(const RankSpawn& spawn) {
  if (spawn.command.empty()) fail(ErrorCode::InvalidArgument, "no program to run for rank ", spawn.rank);
  RankProcess process;
  process.rank = spawn.rank;
  process.domain = spawn.domain;
  UniqueFd stdoutWrite, stderrWrite;
  if (spawn.captureOutput) {
    makePipe(process.stdoutPipe, stdoutWrite);
    makePipe(process.stderrPipe, stderrWrite);
  }
  UniqueFd netns;
  if (!spawn.netnsPath.empty()) {
    netns.reset(::open(spawn.netnsPath.c_str(), O_RDONLY | O_CLOEXEC));
    if (!netns.valid()) failErrno(concat("cannot open network namespace ", spawn.netnsPath));
  }
  std::vector<char*> argv = pointersTo(spawn.command);
  std::vector<char*> envp = pointersTo(spawn.environment);

  pid_t pid = ::fork();
  if (pid < 0) failErrno("fork");
  if (pid == 0) runChild(spawn, stdoutWrite.get(), stderrWrite.get(), netns.get(), argv.data(), envp.data());
  // Also set the group here: signals sent before the child runs setpgid must still reach it.
  // EACCES (the child already exec'd, having set it itself) is harmless.
  ::setpgid(pid, pid);
  process.pid = pid;
  process.running = true;
  return process;
}

void signalRankGroup(const RankProcess& rank, int sig) {
  if (rank.pid <= 0) return;
  if (::kill(-rank.pid, sig) != 0 && rank.running) ::kill(rank.pid, sig);
}

}  // namespace tiercc::run
