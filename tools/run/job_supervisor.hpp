// JobSupervisor: starts the ranks of one local job and watches them until they are all gone:
// relays their output, forwards interrupts, stops the job when a rank fails or time runs out.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tools/run/line_prefixer.hpp"
#include "tools/run/options.hpp"
#include "tools/run/rank_environment.hpp"
#include "tools/run/rank_process.hpp"
#include "tools/run/signal_channel.hpp"

namespace tiercc::run {

class JobSupervisor {
 public:
  using Clock = std::chrono::steady_clock;
  /// Ranks that ignore SIGTERM get SIGKILL this long after it.
  static constexpr std::chrono::seconds kGracePeriod{3};

  JobSupervisor(const RunOptions& options, SignalChannel& signals);

  /// Starts every rank. When the launcher cannot start one (no pipes, no fork), it says so and
  /// stops the ranks already started; run() then only waits for them and returns 1.
  void launch(const JobAddresses& addresses);
  /// Supervises until every rank has ended and its output is relayed; returns the launcher's
  /// exit code: 0, the first failing rank's code (128+signal when killed), 124 on timeout,
  /// 128+signal when interrupted, 1 when launching failed.
  int run();

 private:
  struct RankOutput {
    std::unique_ptr<LinePrefixer> out, err;
  };

  void handleSignals();
  void reapChildren();
  void reportFailure(const RankProcess& rank);
  void relayAvailable(std::size_t index);
  bool relayPipe(UniqueFd& pipe, LinePrefixer& prefixer, bool untilEmpty);
  void onTimeout();
  void onInterrupt(int sig);
  void stopAll(int sig);
  void stopWithGrace(int exitCode);
  void checkKillDeadline();
  int runningCount() const;
  bool outputOpen() const;
  int pollTimeoutMs() const;
  void say(const std::string& message);

  const RunOptions& options_;
  SignalChannel& signals_;
  std::vector<RankProcess> ranks_;
  std::vector<RankOutput> outputs_;
  Clock::time_point startedAt_;
  std::optional<Clock::time_point> jobDeadline_;
  std::optional<Clock::time_point> killDeadline_;   // SIGKILL is due then
  std::optional<Clock::time_point> drainDeadline_;  // stop waiting for output then
  std::optional<int> exitCode_;                     // set by the first event that ends the job
  bool stopping_ = false;
  bool killed_ = false;
  int interrupts_ = 0;
};

}  // namespace tiercc::run
