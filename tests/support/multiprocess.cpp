// Multi-process fixture (see multiprocess.hpp). Ranks are forked before the store server's
// thread starts (fork and threads mix badly), then learn the store's port through a pipe.
#include "tests/support/multiprocess.hpp"

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <thread>

#include "core/log.hpp"
#include "bootstrap/store.hpp"

namespace tiercc::test {

bool RankResult::ok() const { return !timedOut && WIFEXITED(status) && WEXITSTATUS(status) == 0; }

std::string RankResult::describe() const {
  std::ostringstream out;
  out << "rank " << rank << ": ";
  if (timedOut) out << "killed at the job deadline";
  else if (WIFEXITED(status)) out << "exit " << WEXITSTATUS(status);
  else if (WIFSIGNALED(status)) out << "killed by signal " << WTERMSIG(status) << " (" << strsignal(WTERMSIG(status)) << ")";
  return out.str();
}

bool JobResult::ok() const {
  for (const RankResult& r : ranks)
    if (!r.ok()) return false;
  return true;
}

std::string JobResult::report() const {
  std::ostringstream out;
  for (const RankResult& r : ranks)
    if (!r.ok()) out << "---- " << r.describe() << "; output:\n" << r.output << "\n";
  return out.str();
}

namespace {

std::string readAll(int fd) {
  std::string text;
  lseek(fd, 0, SEEK_SET);
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof(buf))) > 0) text.append(buf, static_cast<size_t>(n));
  return text;
}

[[noreturn]] void runChild(int rank, int portPipe, int outFd, const std::string& secret, const JobOptions& options,
                           const std::function<void(int, const std::string&)>& body) {
  dup2(outFd, STDOUT_FILENO);
  dup2(outFd, STDERR_FILENO);
  setenv("TIERCC_STORE_SECRET", secret.c_str(), 1);
  for (auto& [k, v] : options.env) setenv(k.c_str(), v.c_str(), 1);
  if (options.rankEnv)
    for (auto& [k, v] : options.rankEnv(rank)) setenv(k.c_str(), v.c_str(), 1);
  log::reload();
  std::uint16_t port = 0;
  if (::read(portPipe, &port, sizeof(port)) != sizeof(port)) _exit(90);
  int code = 0;
  try {
    body(rank, "127.0.0.1:" + std::to_string(port));
  } catch (const std::exception& e) {
    std::cerr << "rank " << rank << " failed: " << e.what() << std::endl;
    code = 1;
  }
  std::cout.flush();
  _exit(code);
}

// Unique per job, so that a rank of one job cannot join another's store by mistake.
std::string jobSecret() {
  static int jobs = 0;
  return "tiercc-test-" + std::to_string(::getpid()) + "-" + std::to_string(++jobs) + "-" +
         std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
}

}  // namespace

JobResult runRanks(int n, const std::function<void(int, const std::string&)>& body, const JobOptions& options) {
  const std::string secret = jobSecret();
  std::vector<pid_t> pids(n);
  std::vector<int> outFds(n), portPipes(n);
  for (int r = 0; r < n; ++r) {
    int p[2];
    if (pipe(p) != 0) throw std::runtime_error("pipe failed");
    outFds[r] = memfd_create("tiercc-test-rank", 0);
    pid_t pid = fork();
    if (pid == 0) {
      ::close(p[1]);
      runChild(r, p[0], outFds[r], secret, options, body);
    }
    ::close(p[0]);
    pids[r] = pid;
    portPipes[r] = p[1];
  }
  JobResult result;
  result.ranks.resize(n);
  {
    TcpStoreServer server("127.0.0.1", 0, TcpStoreServer::Limits{}, secret);
    std::uint16_t port = server.port();
    for (int r = 0; r < n; ++r) {
      ssize_t w = ::write(portPipes[r], &port, sizeof(port));
      (void)w;
      ::close(portPipes[r]);
    }
    auto deadline = std::chrono::steady_clock::now() + options.timeout;
    int running = n;
    std::vector<bool> done(n, false);
    while (running > 0) {
      for (int r = 0; r < n; ++r) {
        if (done[r]) continue;
        int status = 0;
        if (waitpid(pids[r], &status, WNOHANG) == pids[r]) {
          done[r] = true;
          --running;
          result.ranks[r].status = status;
          result.ranks[r].rank = r;
          bool failed = !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
          if (failed) deadline = std::min(deadline, std::chrono::steady_clock::now() + options.failureGrace);
        }
      }
      if (running > 0 && std::chrono::steady_clock::now() >= deadline) {
        for (int r = 0; r < n; ++r)
          if (!done[r]) {
            kill(pids[r], SIGKILL);
            waitpid(pids[r], &result.ranks[r].status, 0);
            result.ranks[r].rank = r;
            result.ranks[r].timedOut = true;
            done[r] = true;
          }
        running = 0;
      }
      if (running > 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  for (int r = 0; r < n; ++r) {
    result.ranks[r].output = readAll(outFds[r]);
    ::close(outFds[r]);
  }
  return result;
}

std::shared_ptr<Store> connectJobStore(const std::string& storeAddr, std::chrono::milliseconds connectTimeout) {
  std::string host;
  std::uint16_t port = 0;
  parseHostPort(storeAddr, host, port);
  const char* secret = std::getenv("TIERCC_STORE_SECRET");
  return connectTcpStore(host, port, Deadline::after(connectTimeout), std::chrono::milliseconds::max(),
                         secret ? secret : "");
}

}  // namespace tiercc::test
