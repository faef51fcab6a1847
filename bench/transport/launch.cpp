// Two ranks for tiercc-transport-bench (see launch.hpp). As in tests/support/multiprocess.cpp,
// the ranks are forked before the store server's thread starts and learn its port through a pipe.
#include "bench/transport/launch.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <thread>

#include "runtime/env.hpp"
#include "core/errors.hpp"
#include "core/log.hpp"
#include "bootstrap/store.hpp"

namespace tiercc::tbench {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr auto kFailureGrace = 10s;

int runRank(int rank, const std::string& storeAddr,
            const std::function<void(int, std::shared_ptr<Store>)>& body) {
  try {
    std::string host;
    std::uint16_t port = 0;
    parseHostPort(storeAddr, host, port);
    auto store = std::make_shared<PrefixStore>(connectTcpStore(host, port, Deadline::after(30s)), "transport-bench/");
    body(rank, store);
    return 0;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "tiercc-transport-bench: rank %d: %s\n", rank, e.what());
    return 1;
  }
}

[[noreturn]] void runChild(int rank, int portPipe, const std::function<void(int, std::shared_ptr<Store>)>& body) {
  setenv("TIERCC_RANK", std::to_string(rank).c_str(), 1);  // for the log prefix
  setenv("TIERCC_WORLD_SIZE", "2", 1);
  log::reload();
  std::uint16_t port = 0;
  if (::read(portPipe, &port, sizeof(port)) != sizeof(port)) _exit(90);
  ::close(portPipe);
  int code = runRank(rank, "127.0.0.1:" + std::to_string(port), body);
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(code);
}

std::string describe(int rank, int status) {
  if (WIFEXITED(status)) return concat("rank ", rank, " exited with ", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return concat("rank ", rank, " was killed by signal ", WTERMSIG(status));
  return concat("rank ", rank, " ended with status ", status);
}

int forkTwoRanks(int timeoutS, const std::function<void(int, std::shared_ptr<Store>)>& body) {
  std::fflush(stdout);
  pid_t pids[2] = {-1, -1};
  int pipes[2] = {-1, -1};
  for (int r = 0; r < 2; ++r) {
    int p[2];
    if (pipe(p) != 0) failErrno("pipe");
    pids[r] = fork();
    if (pids[r] < 0) failErrno("fork");
    if (pids[r] == 0) {
      ::close(p[1]);
      if (r == 1) ::close(pipes[0]);
      runChild(r, p[0], body);
    }
    ::close(p[0]);
    pipes[r] = p[1];
  }
  TcpStoreServer server("127.0.0.1", 0);
  std::uint16_t port = server.port();
  for (int& fd : pipes) {
    if (::write(fd, &port, sizeof(port)) != sizeof(port)) std::fprintf(stderr, "tiercc-transport-bench: cannot pass the store port\n");
    ::close(fd);
  }
  auto deadline = Clock::now() + std::chrono::seconds(timeoutS);
  int status[2] = {0, 0};
  bool done[2] = {false, false};
  bool ok = true;
  while (!done[0] || !done[1]) {
    for (int r = 0; r < 2; ++r) {
      if (done[r] || waitpid(pids[r], &status[r], WNOHANG) != pids[r]) continue;
      done[r] = true;
      if (!WIFEXITED(status[r]) || WEXITSTATUS(status[r]) != 0) {
        ok = false;
        std::fprintf(stderr, "tiercc-transport-bench: %s\n", describe(r, status[r]).c_str());
        deadline = std::min(deadline, Clock::now() + kFailureGrace);
      }
    }
    if ((!done[0] || !done[1]) && Clock::now() >= deadline) {
      for (int r = 0; r < 2; ++r) {
        if (done[r]) continue;
        kill(pids[r], SIGKILL);
        waitpid(pids[r], &status[r], 0);
        done[r] = true;
        std::fprintf(stderr, "tiercc-transport-bench: rank %d killed after %d s (--timeout) or after the other rank failed\n", r, timeoutS);
      }
      ok = false;
    }
    std::this_thread::sleep_for(5ms);
  }
  return ok ? 0 : 1;
}

}  // namespace

int runTwoRanks(int timeoutS, const std::function<void(int, std::shared_ptr<Store>)>& body) {
  if (!std::getenv("TIERCC_STORE") && !std::getenv("TIERCC_RANK")) return forkTwoRanks(timeoutS, body);
  LaunchEnv env = readLaunchEnv();
  TIERCC_REQUIRE_ARG(env.worldSize == 2, "tiercc-transport-bench runs on 2 ranks, not ", env.worldSize, " (",
                     env.source, ")");
  return runRank(env.rank, env.storeAddr, body);
}

}  // namespace tiercc::tbench
