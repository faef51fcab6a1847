// Tests of tiercc-run, the local launcher: runs the built binary as a user would and checks its
// exit codes, prefixed output, the environment it gives ranks, and how it stops a failing job.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

// Every launcher run is bounded by this, even when the launcher misbehaves.
constexpr seconds kRunLimit{10};

struct LaunchResult {
  int exitCode = -1;  // the code, or 128+signal when the launcher itself was killed
  std::string out;
  std::string err;
  Clock::duration elapsed{};
  bool timedOut = false;
};

struct SignalAfter {
  milliseconds delay;
  int signal;
};

std::filesystem::path launcherPath() {
  if (const char* dir = std::getenv("TIERCC_BIN_DIR"); dir != nullptr && *dir != '\0') {
    return std::filesystem::path(dir) / "tiercc-run";
  }
  // Tests and tools share build/bin; a test binary elsewhere looks in ../bin too.
  auto self = std::filesystem::read_symlink("/proc/self/exe").parent_path();
  for (const auto& candidate : {self / "tiercc-run", self.parent_path() / "bin" / "tiercc-run"}) {
    if (std::filesystem::exists(candidate)) return candidate;
  }
  return self / "tiercc-run";
}

void readInto(int& fd, std::string& sink) {
  char buffer[8192];
  ssize_t n = ::read(fd, buffer, sizeof buffer);
  if (n > 0) {
    sink.append(buffer, static_cast<std::size_t>(n));
  } else if (n == 0 || errno != EINTR) {
    ::close(fd);
    fd = -1;
  }
}

// Runs tiercc-run with args, capturing stdout and stderr, optionally sending it a signal after a
// delay; kills it when it runs past kRunLimit.
LaunchResult runLauncher(const std::vector<std::string>& args, std::optional<SignalAfter> signalAfter = {}) {
  LaunchResult result;
  std::string binary = launcherPath().string();
  std::vector<char*> argv;
  argv.push_back(binary.data());
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  int outPipe[2], errPipe[2];
  if (::pipe2(outPipe, O_CLOEXEC) != 0 || ::pipe2(errPipe, O_CLOEXEC) != 0) {
    ADD_FAILURE() << "pipe2 failed";
    return result;
  }
  auto start = Clock::now();
  pid_t pid = ::fork();
  if (pid == 0) {
    int devNull = ::open("/dev/null", O_RDONLY);
    ::dup2(devNull, STDIN_FILENO);
    ::dup2(outPipe[1], STDOUT_FILENO);
    ::dup2(errPipe[1], STDERR_FILENO);
    // Interrupt tests must not depend on how the test runner was started.
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    ::execv(argv[0], argv.data());
    ::_exit(126);
  }
  ::close(outPipe[1]);
  ::close(errPipe[1]);
  if (pid < 0) {
    ADD_FAILURE() << "fork failed";
    ::close(outPipe[0]);
    ::close(errPipe[0]);
    return result;
  }

  int outFd = outPipe[0], errFd = errPipe[0];
  bool signalled = false;
  while (outFd >= 0 || errFd >= 0) {
    auto now = Clock::now();
    if (now - start >= kRunLimit) {
      result.timedOut = true;
      ::kill(pid, SIGKILL);
      break;
    }
    auto wakeAt = start + kRunLimit;
    if (signalAfter && !signalled) {
      if (now - start >= signalAfter->delay) {
        ::kill(pid, signalAfter->signal);
        signalled = true;
      } else {
        wakeAt = std::min(wakeAt, start + signalAfter->delay);
      }
    }
    pollfd fds[2] = {{outFd, POLLIN, 0}, {errFd, POLLIN, 0}};
    int waitMs = static_cast<int>(std::chrono::ceil<milliseconds>(wakeAt - now).count());
    if (::poll(fds, 2, std::max(waitMs, 1)) < 0 && errno != EINTR) break;
    if (outFd >= 0 && fds[0].revents != 0) readInto(outFd, result.out);
    if (errFd >= 0 && fds[1].revents != 0) readInto(errFd, result.err);
  }
  if (outFd >= 0) ::close(outFd);
  if (errFd >= 0) ::close(errFd);
  int status = 0;
  // The pipes are closed; the launcher exits right after (or was killed above).
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.elapsed = Clock::now() - start;
  result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::string describe(const LaunchResult& r) {
  return "exit " + std::to_string(r.exitCode) + (r.timedOut ? " (killed at the test's limit)" : "") +
         "\n--- stdout ---\n" + r.out + "--- stderr ---\n" + r.err;
}

class LauncherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(launcherPath())) {
      FAIL() << "tiercc-run not found at " << launcherPath() << " (set TIERCC_BIN_DIR to the build's bin/)";
    }
  }
};

TEST_F(LauncherTest, AllRanksSucceed) {
  auto r = runLauncher({"-n", "3", "sh", "-c", "echo hello from $TIERCC_RANK"});
  ASSERT_EQ(r.exitCode, 0) << describe(r);
  for (int rank = 0; rank < 3; ++rank) {
    std::string expected = "[r" + std::to_string(rank) + ".d0] hello from " + std::to_string(rank) + "\n";
    EXPECT_NE(r.out.find(expected), std::string::npos) << describe(r);
  }
  EXPECT_EQ(lines(r.out).size(), 3u) << describe(r);
  EXPECT_EQ(r.err, "");
}

TEST_F(LauncherTest, DomainSizeSetsPrefixesAndEnvironment) {
  auto r = runLauncher({"-n", "4", "--domain-size", "2", "sh", "-c",
                        "echo $TIERCC_RANK $TIERCC_WORLD_SIZE $TIERCC_DOMAIN_SIZE $TIERCC_STORE"});
  ASSERT_EQ(r.exitCode, 0) << describe(r);
  std::map<int, std::string> byRank;
  std::set<std::string> stores;
  for (const auto& line : lines(r.out)) {
    int rank = -1, world = -1, domainSize = -1;
    char domainTag[32] = {};
    char store[128] = {};
    ASSERT_EQ(std::sscanf(line.c_str(), "[r%*d.%31[^]]] %d %d %d %127s", domainTag, &rank, &world,
                          &domainSize, store),
              5)
        << line;
    byRank[rank] = line.substr(0, line.find(' '));
    EXPECT_EQ(world, 4) << line;
    EXPECT_EQ(domainSize, 2) << line;
    stores.insert(store);
  }
  ASSERT_EQ(byRank.size(), 4u) << describe(r);
  EXPECT_EQ(byRank[0], "[r0.d0]");
  EXPECT_EQ(byRank[1], "[r1.d0]");
  EXPECT_EQ(byRank[2], "[r2.d1]");
  EXPECT_EQ(byRank[3], "[r3.d1]");
  ASSERT_EQ(stores.size(), 1u) << "every rank must see the same store";
  const std::string& store = *stores.begin();
  ASSERT_EQ(store.rfind("127.0.0.1:", 0), 0u) << store;
  int port = std::atoi(store.c_str() + std::strlen("127.0.0.1:"));
  EXPECT_GT(port, 0);
  EXPECT_LT(port, 65536);
}

// torch.distributed's env:// rendezvous finds the job as under torchrun: ranks, local ranks
// counted inside the domain (the last one uneven), one master address and port for all.
TEST_F(LauncherTest, TorchrunVariablesForEveryRank) {
  ::unsetenv("MASTER_ADDR");
  ::unsetenv("MASTER_PORT");
  auto r = runLauncher({"-n", "3", "--domain-size", "2", "sh", "-c",
                        "echo $RANK $WORLD_SIZE $LOCAL_RANK $LOCAL_WORLD_SIZE $MASTER_ADDR $MASTER_PORT"});
  ASSERT_EQ(r.exitCode, 0) << describe(r);
  std::set<std::string> masters;
  for (const auto& line : lines(r.out)) {
    int rank = -1, world = -1, local = -1, localWorld = -1, port = 0;
    char addr[64] = {};
    ASSERT_EQ(std::sscanf(line.c_str(), "[r%*d.d%*d] %d %d %d %d %63s %d", &rank, &world, &local, &localWorld, addr,
                          &port),
              6)
        << line;
    EXPECT_EQ(world, 3) << line;
    EXPECT_EQ(local, rank % 2) << line;
    EXPECT_EQ(localWorld, rank < 2 ? 2 : 1) << line;
    EXPECT_STREQ(addr, "127.0.0.1") << line;
    EXPECT_GT(port, 0) << line;
    masters.insert(std::string(addr) + ":" + std::to_string(port));
  }
  EXPECT_EQ(lines(r.out).size(), 3u) << describe(r);
  EXPECT_EQ(masters.size(), 1u) << describe(r);
}

TEST_F(LauncherTest, MasterAddressAndPortOfTheCallerAreKept) {
  ::setenv("MASTER_ADDR", "10.1.2.3", 1);
  ::setenv("MASTER_PORT", "29511", 1);
  auto r = runLauncher({"-n", "2", "sh", "-c", "echo $MASTER_ADDR:$MASTER_PORT"});
  ::unsetenv("MASTER_ADDR");
  ::unsetenv("MASTER_PORT");
  ASSERT_EQ(r.exitCode, 0) << describe(r);
  EXPECT_NE(r.out.find("[r0.d0] 10.1.2.3:29511\n"), std::string::npos) << describe(r);
  EXPECT_NE(r.out.find("[r1.d0] 10.1.2.3:29511\n"), std::string::npos) << describe(r);
}

TEST_F(LauncherTest, UnevenLastDomainAndTransportAndLocalLaunch) {
  auto r = runLauncher({"-n", "3", "--domain-size", "2", "--transport", "tcp", "sh", "-c",
                        "echo $TIERCC_TRANSPORT $TIERCC_LOCAL_LAUNCH"});
  ASSERT_EQ(r.exitCode, 0) << describe(r);
  EXPECT_NE(r.out.find("[r2.d1] tcp 1\n"), std::string::npos) << describe(r);
  EXPECT_NE(r.out.find("[r1.d0] tcp 1\n"), std::string::npos) << describe(r);
}

// Every rank of a job gets the same store secret, 64 hex digits from the kernel's randomness,
// and the next job another; a secret the caller sets is kept.
TEST_F(LauncherTest, EveryRankGetsTheJobsStoreSecret) {
  ::unsetenv("TIERCC_STORE_SECRET");
  auto secretsOf = [](const std::string& out) {
    std::set<std::string> secrets;
    for (const auto& line : lines(out)) secrets.insert(line.substr(line.find(' ') + 1));
    return secrets;
  };
  auto first = runLauncher({"-n", "3", "sh", "-c", "echo $TIERCC_STORE_SECRET"});
  auto second = runLauncher({"-n", "1", "sh", "-c", "echo $TIERCC_STORE_SECRET"});
  ASSERT_EQ(first.exitCode, 0) << describe(first);
  ASSERT_EQ(second.exitCode, 0) << describe(second);
  const auto secrets = secretsOf(first.out);
  ASSERT_EQ(secrets.size(), 1u) << describe(first);
  const std::string secret = *secrets.begin();
  EXPECT_EQ(secret.size(), 64u) << secret;
  EXPECT_EQ(secret.find_first_not_of("0123456789abcdef"), std::string::npos) << secret;
  EXPECT_NE(secretsOf(second.out), secrets) << "two jobs got the same secret";
  ::setenv("TIERCC_STORE_SECRET", "chosen-by-the-caller", 1);
  auto chosen = runLauncher({"-n", "1", "sh", "-c", "echo $TIERCC_STORE_SECRET"});
  ::unsetenv("TIERCC_STORE_SECRET");
  EXPECT_EQ(chosen.out, "[r0.d0] chosen-by-the-caller\n") << describe(chosen);
}

TEST_F(LauncherTest, InheritsOtherEnvironment) {
  ::setenv("TIERCC_LAUNCHER_TEST_MARK", "kept", 1);
  auto r = runLauncher({"-n", "1", "sh", "-c", "echo $TIERCC_LAUNCHER_TEST_MARK"});
  ::unsetenv("TIERCC_LAUNCHER_TEST_MARK");
  ASSERT_EQ(r.exitCode, 0) << describe(r);
  EXPECT_EQ(r.out, "[r0.d0] kept\n");
}

TEST_F(LauncherTest, StderrIsPrefixedAndPartialLastLineFlushed) {
  auto r = runLauncher({"-n", "2", "sh", "-c", "printf 'to err' >&2; printf 'no newline'"});
  ASSERT_EQ(r.exitCode, 0) << describe(r);
  EXPECT_NE(r.err.find("[r0.d0] to err\n"), std::string::npos) << describe(r);
  EXPECT_NE(r.err.find("[r1.d0] to err\n"), std::string::npos) << describe(r);
  EXPECT_NE(r.out.find("[r0.d0] no newline\n"), std::string::npos) << describe(r);
  EXPECT_NE(r.out.find("[r1.d0] no newline\n"), std::string::npos) << describe(r);
}

TEST_F(LauncherTest, LinesOfManyRanksNeverInterleave) {
  auto r = runLauncher({"-n", "4", "sh", "-c",
                        "i=0; while [ $i -lt 500 ]; do echo rank$TIERCC_RANK-line-$i-xxxxxxxxxxxxxxxxxxxx; "
                        "i=$((i+1)); done"});
  ASSERT_EQ(r.exitCode, 0) << describe(r);
  auto all = lines(r.out);
  ASSERT_EQ(all.size(), 2000u);
  std::map<int, int> nextLine;
  for (const auto& line : all) {
    int prefixRank = -1, bodyRank = -2, index = -1;
    ASSERT_EQ(std::sscanf(line.c_str(), "[r%d.d0] rank%d-line-%d-", &prefixRank, &bodyRank, &index), 3)
        << line;
    ASSERT_EQ(prefixRank, bodyRank) << line;
    EXPECT_EQ(index, nextLine[prefixRank]++) << "each rank's lines arrive whole and in order: " << line;
  }
}

TEST_F(LauncherTest, NoPrefixPassesOutputThrough) {
  auto r = runLauncher({"--no-prefix", "-n", "1", "sh", "-c", "echo plain; echo other >&2"});
  ASSERT_EQ(r.exitCode, 0) << describe(r);
  EXPECT_EQ(r.out, "plain\n");
  EXPECT_EQ(r.err, "other\n");
}

TEST_F(LauncherTest, FailingRankStopsTheOthers) {
  auto r = runLauncher(
      {"-n", "4", "sh", "-c", "if [ $TIERCC_RANK = 2 ]; then echo last words >&2; exit 3; fi; sleep 30"});
  ASSERT_FALSE(r.timedOut) << describe(r);
  EXPECT_EQ(r.exitCode, 3) << describe(r);
  auto message = r.err.find("tiercc-run: rank 2 (domain 0) exited with code 3; stopping the other 3 ranks");
  EXPECT_NE(message, std::string::npos) << describe(r);
  auto lastWords = r.err.find("[r2.d0] last words\n");
  EXPECT_NE(lastWords, std::string::npos) << describe(r);
  EXPECT_LT(lastWords, message) << "a rank's own output comes before the launcher's word on it";
  // The sleeping ranks die on SIGTERM, well before the SIGKILL grace period ends.
  EXPECT_LT(r.elapsed, seconds(3)) << describe(r);
}

TEST_F(LauncherTest, RankIgnoringTermIsKilledAfterGracePeriod) {
  auto r = runLauncher(
      {"-n", "2", "sh", "-c", "trap '' TERM; if [ $TIERCC_RANK = 0 ]; then sleep 0.3; exit 5; fi; sleep 30"});
  ASSERT_FALSE(r.timedOut) << describe(r);
  EXPECT_EQ(r.exitCode, 5) << describe(r);
  EXPECT_NE(r.err.find("sending SIGKILL: 1"), std::string::npos) << describe(r);
}

TEST_F(LauncherTest, RankKilledBySignalIsNamed) {
  auto r = runLauncher({"-n", "3", "--domain-size", "2", "sh", "-c",
                        "if [ $TIERCC_RANK = 2 ]; then kill -SEGV $$; fi; sleep 30"});
  ASSERT_FALSE(r.timedOut) << describe(r);
  EXPECT_EQ(r.exitCode, 128 + SIGSEGV) << describe(r);
  EXPECT_NE(r.err.find("tiercc-run: rank 2 (domain 1) was killed by signal 11 (SIGSEGV)"), std::string::npos)
      << describe(r);
}

TEST_F(LauncherTest, TimeoutStopsTheJob) {
  auto r = runLauncher({"--timeout", "1", "-n", "2", "sleep", "30"});
  ASSERT_FALSE(r.timedOut) << describe(r);
  EXPECT_EQ(r.exitCode, 124) << describe(r);
  EXPECT_NE(r.err.find("tiercc-run: timed out after 1 s; ranks still running: 0 1"), std::string::npos)
      << describe(r);
  EXPECT_LT(r.elapsed, seconds(6)) << describe(r);
}

TEST_F(LauncherTest, InterruptIsForwardedToRanks) {
  auto r = runLauncher({"-n", "2", "sh", "-c", "trap 'echo stopping; kill $!; exit 0' INT; sleep 30 & wait"},
                       SignalAfter{milliseconds(500), SIGINT});
  ASSERT_FALSE(r.timedOut) << describe(r);
  EXPECT_EQ(r.exitCode, 128 + SIGINT) << describe(r);
  EXPECT_NE(r.err.find("got SIGINT; forwarding it to 2 running ranks"), std::string::npos) << describe(r);
  EXPECT_NE(r.out.find("[r0.d0] stopping"), std::string::npos) << describe(r);
  EXPECT_NE(r.out.find("[r1.d0] stopping"), std::string::npos) << describe(r);
}

TEST_F(LauncherTest, RailSubnetGivesEachRankItsRailAddress) {
  auto r = runLauncher({"-n", "4", "--domain-size", "2", "--rail-subnet", "198.18", "sh", "-c",
                        "echo $TIERCC_SOCKET_IFADDR ${TIERCC_DOMAIN_ID-unset}"});
  ASSERT_EQ(r.exitCode, 0) << describe(r);
  // 198.18.<local rank>.<domain+1>; no namespaces, so no TIERCC_DOMAIN_ID either.
  EXPECT_NE(r.out.find("[r0.d0] 198.18.0.1 unset\n"), std::string::npos) << describe(r);
  EXPECT_NE(r.out.find("[r1.d0] 198.18.1.1 unset\n"), std::string::npos) << describe(r);
  EXPECT_NE(r.out.find("[r2.d1] 198.18.0.2 unset\n"), std::string::npos) << describe(r);
  EXPECT_NE(r.out.find("[r3.d1] 198.18.1.2 unset\n"), std::string::npos) << describe(r);
}

TEST_F(LauncherTest, MissingNetworkNamespaceStopsTheLaunchClearly) {
  auto r = runLauncher({"-n", "2", "--domain-size", "1", "--netns-prefix", "tiercc-launcher-test-absent-",
                        "--store-bind", "127.0.0.1", "true"});
  ASSERT_FALSE(r.timedOut) << describe(r);
  EXPECT_EQ(r.exitCode, 1) << describe(r);
  EXPECT_NE(r.err.find("cannot open network namespace /run/netns/tiercc-launcher-test-absent-0"),
            std::string::npos)
      << describe(r);
  EXPECT_EQ(r.out, "");
}

TEST_F(LauncherTest, NetnsPrefixMovesTheStoreToTheManagementAddress) {
  // Without bench/two-tier-net.sh's network, 198.19.0.1 is not ours and the store cannot bind;
  // with it, the namespace below is missing. Either way the launcher names the store address.
  auto r = runLauncher({"-v", "-n", "1", "--netns-prefix", "tiercc-launcher-test-absent-", "true"});
  ASSERT_FALSE(r.timedOut) << describe(r);
  EXPECT_EQ(r.exitCode, 1) << describe(r);
  EXPECT_NE(r.err.find("198.19.0.1"), std::string::npos) << describe(r);
}

TEST_F(LauncherTest, MissingProgramExits127) {
  auto r = runLauncher({"-n", "2", "/nonexistent/tiercc-no-such-program"});
  ASSERT_FALSE(r.timedOut) << describe(r);
  EXPECT_EQ(r.exitCode, 127) << describe(r);
  EXPECT_NE(
      r.err.find("tiercc-run: cannot run '/nonexistent/tiercc-no-such-program': No such file or directory"),
      std::string::npos)
      << describe(r);
}

struct UsageCase {
  const char* name;
  std::vector<std::string> args;
  const char* message;
};

// ctest lists the case by name rather than as raw bytes.
void PrintTo(const UsageCase& c, std::ostream* out) { *out << c.name; }

class LauncherUsageTest : public LauncherTest, public ::testing::WithParamInterface<UsageCase> {};

TEST_P(LauncherUsageTest, BadUsageExits2WithMessageAndUsage) {
  auto r = runLauncher(GetParam().args);
  EXPECT_EQ(r.exitCode, 2) << describe(r);
  EXPECT_NE(r.err.find(std::string("tiercc-run: ") + GetParam().message), std::string::npos) << describe(r);
  EXPECT_NE(r.err.find("usage: tiercc-run -n N"), std::string::npos) << describe(r);
  EXPECT_EQ(r.out, "");
}

INSTANTIATE_TEST_SUITE_P(
    Cases, LauncherUsageTest,
    ::testing::Values(
        UsageCase{"MissingN", {"true"}, "missing -n N"},
        UsageCase{"ZeroRanks", {"-n", "0", "true"}, "-n needs an integer"},
        UsageCase{"NotANumber", {"-n", "four", "true"}, "-n needs an integer"},
        UsageCase{
            "ZeroDomainSize", {"-n", "2", "--domain-size", "0", "true"}, "--domain-size needs an integer"},
        UsageCase{"UnknownOption", {"-n", "2", "--frobnicate", "true"}, "unknown option '--frobnicate'"},
        UsageCase{"UnknownTransport",
                  {"-n", "2", "--transport", "carrier-pigeon", "true"},
                  "--transport must be tcp, ucx or ibverbs"},
        UsageCase{"BadTimeout", {"-n", "2", "--timeout", "-1", "true"}, "--timeout needs a positive"},
        UsageCase{"NetnsPrefixWithSlash",
                  {"-n", "2", "--netns-prefix", "../etc/d", "true"},
                  "--netns-prefix needs a namespace name prefix"},
        UsageCase{"EmptyNetnsPrefix", {"-n", "2", "--netns-prefix=", "true"}, "--netns-prefix needs"},
        UsageCase{"RailSubnetThreeOctets",
                  {"-n", "2", "--rail-subnet", "198.18.0", "true"},
                  "--rail-subnet needs two octets like 198.18, got '198.18.0'"},
        UsageCase{"RailSubnetOctetTooBig", {"-n", "2", "--rail-subnet", "198.256", "true"}, "--rail-subnet needs"},
        UsageCase{"RailSubnetNotANumber", {"-n", "2", "--rail-subnet", "a.b", "true"}, "--rail-subnet needs"},
        UsageCase{"RailSubnetTooManyDomains",
                  {"-n", "255", "--domain-size", "1", "--rail-subnet", "198.18", "true"},
                  "--rail-subnet gives domains 0..253 only, the job has 255 domains"},
        UsageCase{"RailSubnetTooManyLocalRanks",
                  {"-n", "257", "--rail-subnet", "198.18", "true"},
                  "--rail-subnet gives local ranks 0..255 only"},
        UsageCase{"MissingValue", {"-n"}, "option -n needs a value"},
        UsageCase{"MissingProgram", {"-n", "2"}, "missing the program to run"}),
    [](const ::testing::TestParamInfo<UsageCase>& param) { return std::string(param.param.name); });

TEST_F(LauncherTest, HelpPrintsUsageAndSucceeds) {
  auto r = runLauncher({"--help"});
  EXPECT_EQ(r.exitCode, 0) << describe(r);
  EXPECT_NE(r.out.find("usage: tiercc-run -n N"), std::string::npos) << describe(r);
}

}  // namespace
