// JobSupervisor: starts the ranks of one local job and watches them until they are all gone.
// One poll() over every output pipe and the signalfd drives everything; deadlines (job timeout,
// SIGKILL after the grace period, output drain) become the poll timeout, so nothing spins.
#include "tools/run/job_supervisor.hpp"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "core/errors.hpp"
#include "tools/run/exit_status.hpp"
#include "tools/run/rank_environment.hpp"

namespace tiercc::run {
namespace {

// After the last rank ends, output still held open by its leftover children is awaited this long.
constexpr std::chrono::seconds kDrainPeriod{1};
constexpr std::size_t kReadChunk = 64 * 1024;

std::string plural(int n, const char* word) { return concat(n, " ", word, n == 1 ? "" : "s"); }

}  // namespace

JobSupervisor::JobSupervisor(const RunOptions& options, SignalChannel& signals)
    : options_(options), signals_(signals) {}

void JobSupervisor::launch(const JobAddresses& addresses) {
  startedAt_ = Clock::now();
  if (options_.timeoutSeconds) {
    jobDeadline_ = startedAt_ + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(*options_.timeoutSeconds));
  }
  if (options_.verbose) {
    std::string domains = plural(domainCount(options_), "domain");
    if (options_.domainSize) {
      domains += concat(" of ", *options_.domainSize);
      if (int last = options_.worldSize % *options_.domainSize; last != 0) {
        domains += concat(" (the last has ", last, ")");
      }
    }
    std::string network;
    if (options_.netnsPrefix) {
      network += concat("; network namespaces ", *options_.netnsPrefix, "0..", *options_.netnsPrefix,
                        domainCount(options_) - 1);
    }
    if (options_.railSubnet) network += concat("; rail addresses ", *options_.railSubnet, ".<local rank>.<domain+1>");
    say(concat("starting ", plural(options_.worldSize, "rank"), " in ", domains, "; store at ", addresses.store,
               options_.transport ? "; transport " + *options_.transport : "", network));
  }
  ranks_.reserve(static_cast<std::size_t>(options_.worldSize));
  for (int rank = 0; rank < options_.worldSize; ++rank) {
    RankSpawn spawn;
    spawn.rank = rank;
    spawn.domain = domainOf(options_, rank);
    spawn.command = options_.command;
    spawn.environment = rankEnvironment(options_, addresses, rank);
    spawn.captureOutput = options_.prefixOutput;
    spawn.childSignalMask = &signals_.originalMask();
    if (options_.netnsPrefix) spawn.netnsPath = "/run/netns/" + netnsOf(options_, rank);
    try {
      ranks_.push_back(spawnRank(spawn));
    } catch (const Error& e) {
      say(concat("cannot start rank ", rank, ": ", e.what(), "; stopping the ",
                 plural(runningCount(), "rank"), " already started"));
      stopWithGrace(1);
      return;
    }
    std::string prefix = concat("[r", rank, ".d", spawn.domain, "] ");
    RankOutput output;
    if (options_.prefixOutput) {
      output.out = std::make_unique<LinePrefixer>(STDOUT_FILENO, prefix);
      output.err = std::make_unique<LinePrefixer>(STDERR_FILENO, prefix);
    }
    outputs_.push_back(std::move(output));
  }
}

int JobSupervisor::run() {
  std::vector<pollfd> fds;
  std::vector<std::pair<std::size_t, bool>> owners;  // per pipe entry: rank index, is stderr
  while (runningCount() > 0 ||
         (outputOpen() && Clock::now() < drainDeadline_.value_or(Clock::time_point::max()))) {
    fds.assign(1, pollfd{signals_.fd(), POLLIN, 0});
    owners.clear();
    for (std::size_t i = 0; i < ranks_.size(); ++i) {
      if (ranks_[i].stdoutPipe.valid()) {
        fds.push_back({ranks_[i].stdoutPipe.get(), POLLIN, 0});
        owners.emplace_back(i, false);
      }
      if (ranks_[i].stderrPipe.valid()) {
        fds.push_back({ranks_[i].stderrPipe.get(), POLLIN, 0});
        owners.emplace_back(i, true);
      }
    }
    int ready = ::poll(fds.data(), fds.size(), pollTimeoutMs());
    if (ready < 0) {
      if (errno == EINTR) continue;
      failErrno("poll");
    }
    // Output first, so a rank's last lines come before the launcher's word about its exit.
    for (std::size_t f = 1; f < fds.size(); ++f) {
      if (fds[f].revents == 0) continue;
      auto [index, isStderr] = owners[f - 1];
      RankProcess& rank = ranks_[index];
      if (isStderr) {
        relayPipe(rank.stderrPipe, *outputs_[index].err, false);
      } else {
        relayPipe(rank.stdoutPipe, *outputs_[index].out, false);
      }
    }
    if (fds[0].revents != 0) handleSignals();
    if (jobDeadline_ && !stopping_ && Clock::now() >= *jobDeadline_) onTimeout();
    checkKillDeadline();
    if (runningCount() == 0 && !drainDeadline_) {
      // Leftover children of ranks being stopped get SIGKILL at killDeadline_; wait for that.
      Clock::time_point from = stopping_ && !killed_ && killDeadline_ ? *killDeadline_ : Clock::now();
      drainDeadline_ = from + kDrainPeriod;
    }
  }
  for (auto& output : outputs_) {
    if (output.out) output.out->flush();
    if (output.err) output.err->flush();
  }
  return exitCode_.value_or(0);
}

void JobSupervisor::handleSignals() {
  bool childEnded = false;
  for (int sig : signals_.readPending()) {
    if (sig == SIGCHLD) {
      childEnded = true;
    } else {
      onInterrupt(sig);
    }
  }
  if (childEnded) reapChildren();
}

void JobSupervisor::reapChildren() {
  // Reap the whole batch first so "stopping the other N ranks" counts only ranks still alive.
  std::vector<std::size_t> ended;
  while (true) {
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid < 0 && errno == EINTR) continue;
    if (pid <= 0) break;
    auto it = std::find_if(ranks_.begin(), ranks_.end(), [&](const RankProcess& r) { return r.pid == pid; });
    if (it == ranks_.end()) continue;
    it->running = false;
    it->waitStatus = status;
    ended.push_back(static_cast<std::size_t>(it - ranks_.begin()));
  }
  for (std::size_t index : ended) {
    relayAvailable(index);
    const RankProcess& rank = ranks_[index];
    if (isFailure(rank.waitStatus) && !stopping_) {
      reportFailure(rank);
      stopWithGrace(exitCodeOf(rank.waitStatus));
    } else if (options_.verbose) {
      say(concat("rank ", rank.rank, " (domain ", rank.domain, ") ", describeWaitStatus(rank.waitStatus)));
    }
  }
}

void JobSupervisor::reportFailure(const RankProcess& rank) {
  std::string message =
      concat("rank ", rank.rank, " (domain ", rank.domain, ") ", describeWaitStatus(rank.waitStatus));
  if (int others = runningCount(); others > 0) {
    message += concat("; stopping the other ", plural(others, "rank"));
  }
  say(message);
}

void JobSupervisor::relayAvailable(std::size_t index) {
  RankProcess& rank = ranks_[index];
  if (rank.stdoutPipe.valid()) relayPipe(rank.stdoutPipe, *outputs_[index].out, true);
  if (rank.stderrPipe.valid()) relayPipe(rank.stderrPipe, *outputs_[index].err, true);
}

bool JobSupervisor::relayPipe(UniqueFd& pipe, LinePrefixer& prefixer, bool untilEmpty) {
  char buffer[kReadChunk];
  do {
    ssize_t n = ::read(pipe.get(), buffer, sizeof buffer);
    if (n > 0) {
      prefixer.feed(std::string_view(buffer, static_cast<std::size_t>(n)));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return true;
    prefixer.flush();  // EOF (or a broken pipe): the rank's last, unterminated line goes out now
    pipe.reset();
    return false;
  } while (untilEmpty);
  return true;
}

void JobSupervisor::onTimeout() {
  std::string still;
  for (const auto& rank : ranks_) {
    if (rank.running) still += concat(" ", rank.rank);
  }
  say(concat("timed out after ", options_.timeoutText, " s; ranks still running:", still));
  stopWithGrace(124);
}

void JobSupervisor::onInterrupt(int sig) {
  ++interrupts_;
  if (interrupts_ == 1) {
    say(concat("got ", signalName(sig), "; forwarding it to ", plural(runningCount(), "running rank")));
    if (!exitCode_) exitCode_ = 128 + sig;
    stopping_ = true;
    stopAll(sig);
    if (!killDeadline_) killDeadline_ = Clock::now() + kGracePeriod;
  } else {
    say(concat("got ", signalName(sig), " again; killing ", plural(runningCount(), "running rank")));
    stopAll(SIGKILL);
    killed_ = true;
  }
}

void JobSupervisor::stopWithGrace(int exitCode) {
  if (!exitCode_) exitCode_ = exitCode;
  stopping_ = true;
  stopAll(SIGTERM);
  if (!killDeadline_) killDeadline_ = Clock::now() + kGracePeriod;
}

void JobSupervisor::stopAll(int sig) {
  for (const auto& rank : ranks_) {
    // A rank already reaped whose pipes are still open has children holding them; its group
    // still exists (so its id cannot have been reused) and they should stop too.
    bool groupAlive = rank.running || rank.stdoutPipe.valid() || rank.stderrPipe.valid();
    if (groupAlive) signalRankGroup(rank, sig);
  }
}

void JobSupervisor::checkKillDeadline() {
  if (!stopping_ || killed_ || !killDeadline_ || Clock::now() < *killDeadline_) return;
  killed_ = true;
  std::string still;
  for (const auto& rank : ranks_) {
    if (rank.running) still += concat(" ", rank.rank);
  }
  if (!still.empty()) {
    say(concat("ranks still running ", kGracePeriod.count(),
               " s after being told to stop, sending SIGKILL:", still));
  }
  stopAll(SIGKILL);
}

int JobSupervisor::runningCount() const {
  return static_cast<int>(
      std::count_if(ranks_.begin(), ranks_.end(), [](const RankProcess& r) { return r.running; }));
}

bool JobSupervisor::outputOpen() const {
  return std::any_of(ranks_.begin(), ranks_.end(),
                     [](const RankProcess& r) { return r.stdoutPipe.valid() || r.stderrPipe.valid(); });
}

int JobSupervisor::pollTimeoutMs() const {
  std::optional<Clock::time_point> next;
  auto consider = [&](const std::optional<Clock::time_point>& at) {
    if (at && (!next || *at < *next)) next = at;
  };
  if (!stopping_) consider(jobDeadline_);
  if (stopping_ && !killed_) consider(killDeadline_);
  consider(drainDeadline_);
  if (!next) return -1;
  auto left = std::chrono::ceil<std::chrono::milliseconds>(*next - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, 60'000));
}

void JobSupervisor::say(const std::string& message) {
  writeAll(STDERR_FILENO, "tiercc-run: " + message + "\n");
}

}  // namespace tiercc::run
