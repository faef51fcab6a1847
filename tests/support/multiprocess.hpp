// Multi-process test fixture: forks N real rank processes joined by a real TCP store, runs a
// body in each, and reports every rank's exit status and output. Bounded in time: ranks still
// running at the deadline are killed and the job fails naming them.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "tiercc/store.hpp"

namespace tiercc::test {

struct RankResult {
  int rank = 0;
  int status = 0;       ///< raw wait status
  bool timedOut = false;
  std::string output;   ///< the rank's stdout and stderr
  bool ok() const;
  std::string describe() const;  ///< "rank 2: exit 1" / "rank 2: killed by signal 9"
};

struct JobOptions {
  std::chrono::milliseconds timeout{120000};
  /// Environment set in every rank before the body runs.
  std::vector<std::pair<std::string, std::string>> env;
  /// Per-rank extra environment (e.g. TIERCC_DOMAIN_ID), may be empty.
  std::function<std::vector<std::pair<std::string, std::string>>(int rank)> rankEnv;
  /// After the first failure, how long the others get before they are killed.
  std::chrono::milliseconds failureGrace{15000};
};

struct JobResult {
  std::vector<RankResult> ranks;
  bool ok() const;
  /// Every failing rank with its output, for test failure messages.
  std::string report() const;
};

/// Runs body(rank, storeAddr) in `n` forked processes. The body fails by throwing. The store
/// has a secret of its own, in every rank's TIERCC_STORE_SECRET (options.env may replace it).
JobResult runRanks(int n, const std::function<void(int rank, const std::string& storeAddr)>& body,
                   const JobOptions& options = {});

/// Throws std::runtime_error with file:line and the message when cond is false (inside ranks).
#define TIERCC_CHECK(cond, ...)                                                                 \
  do {                                                                                          \
    if (!(cond)) {                                                                              \
      std::ostringstream tiercc_check_msg;                                                      \
      tiercc_check_msg << __FILE__ << ":" << __LINE__ << ": check failed: " #cond " "           \
                       << __VA_ARGS__;                                                          \
      throw std::runtime_error(tiercc_check_msg.str());                                         \
    }                                                                                           \
  } while (0)

/// A client of the job's store at storeAddr, presenting the rank's TIERCC_STORE_SECRET.
std::shared_ptr<Store> connectJobStore(const std::string& storeAddr, std::chrono::milliseconds connectTimeout);

}  // namespace tiercc::test
