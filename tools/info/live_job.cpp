// tiercc-info --job (see live_job.hpp). The store's keys it reads: "tiercc/<n>/rank/<r>" (who
// each rank is), "tiercc/<n>/hb/<r>" (its beat count and progress), "tiercc/<n>/failure/verdict".
#include "tools/info/live_job.hpp"

#include <chrono>
#include <cstdio>
#include <iomanip>
#include <optional>
#include <vector>

#include "bootstrap/failure_detector.hpp"
#include "bootstrap/failure_verdict.hpp"
#include "bootstrap/store.hpp"
#include "core/errors.hpp"
#include "core/params.hpp"
#include "runtime/hang_diagnosis.hpp"
#include "runtime/progress.hpp"
#include "runtime/rank_info.hpp"

namespace tiercc::info {
namespace {

constexpr auto kStoreWait = std::chrono::seconds(5);

std::string seconds(std::int64_t ms) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f s", static_cast<double>(std::max<std::int64_t>(0, ms)) / 1000.0);
  return text;
}

}  // namespace

void printLiveJob(std::ostream& out, const std::string& address, int communicator) {
  std::string host;
  std::uint16_t port = 0;
  parseHostPort(address, host, port);
  // The job's secret, if it has one, is in every rank's environment (/proc/<pid>/environ).
  std::shared_ptr<Store> store =
      connectTcpStore(host, port, Deadline::after(kStoreWait), std::chrono::milliseconds::max(),
                      params::getString("TIERCC_STORE_SECRET"));
  const std::string prefix = concat("tiercc/", communicator, "/");
  std::vector<RankInfo> ranks;
  while (store->check({concat(prefix, "rank/", ranks.size())}))
    ranks.push_back(
        RankInfo::decode(store->getString(concat(prefix, "rank/", ranks.size()), Deadline::after(kStoreWait))));
  if (ranks.empty())
    fail(ErrorCode::InvalidArgument, "the store at ", address, " has no communicator ", communicator, " (no ", prefix,
         "rank/0): is it a tiercc job's store, and has the job started?");
  const Topology topo = detectTopology(ranks, 0);
  const std::int64_t now = wallClockMs();
  std::vector<std::optional<Progress>> all(ranks.size());
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const std::string key = prefix + FailureDetector::beatKey(static_cast<int>(r));
    if (!store->check({key})) continue;
    const std::string beat = store->getString(key, Deadline::after(kStoreWait));
    all[r] =
        FailureDetector::beatCount(beat) < 0 ? Progress::left() : Progress::decode(FailureDetector::beatStatus(beat));
  }
  out << "job at " << address << ", communicator " << prefix << ": " << ranks.size() << " ranks, " << topo.describe()
      << "\n";
  out << std::left << std::setw(6) << "rank" << std::setw(8) << "domain" << std::setw(24) << "host, pid"
      << std::setw(36) << "last collective entered" << std::setw(10) << "state" << std::setw(8) << "step"
      << std::setw(24) << "waits on" << std::setw(22) << "last completed"
      << "beat age\n";
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const int rank = static_cast<int>(r);
    std::string who = concat(ranks[r].hostId.substr(0, ranks[r].hostId.find('/')), ", ", ranks[r].pid);  // no boot id
    out << std::setw(6) << rank << std::setw(8) << topo.domainOf(rank) << std::setw(24) << who;
    if (!all[r]) {
      out << "(no progress published: not started, or its failure detector is off)\n";
      continue;
    }
    const Progress& p = *all[r];
    if (p.hasLeft) {
      out << "(left: its communicator is destroyed)\n";
      continue;
    }
    const std::string entered = p.entered < 0 ? "none yet" : p.current.describe(p.entered);
    const std::string step = p.steps ? concat(p.step + 1, "/", p.steps) : "-";
    const std::string waits = p.state == OpState::Running && p.waitingOn >= 0
                                  ? concat("rank ", p.waitingOn, " (", toString(p.waitTier), ")")
                                  : "-";
    const std::string completed =
        p.completed < 0 ? "none yet" : concat("#", p.completed, ", ", seconds(now - p.completedAtMs), " ago");
    out << std::setw(36) << entered << std::setw(10) << toString(p.state) << std::setw(8) << step << std::setw(24)
        << waits << std::setw(22) << completed << seconds(now - p.publishedAtMs) << "\n";
  }
  // What holds the job up, seen from a rank in the newest collective still running.
  int waiting = -1;
  for (std::size_t r = 0; r < ranks.size(); ++r)
    if (all[r] && !all[r]->hasLeft && all[r]->state == OpState::Running &&
        (waiting < 0 || all[r]->entered > all[waiting]->entered))
      waiting = static_cast<int>(r);
  if (waiting >= 0) {
    const Topology seen = detectTopology(ranks, waiting);
    const std::string diagnosis = diagnoseHang(seen, all[waiting]->entered, all[waiting]->current, all, now);
    out << (diagnosis.empty() ? "every rank that runs a collective is in the same one\n"
                              : concat("held up: ", diagnosis, "\n"));
  }
  if (store->check({prefix + kFailureVerdictKey}))
    out << "failure verdict: " << store->getString(prefix + kFailureVerdictKey, Deadline::after(kStoreWait)) << "\n";
}

}  // namespace tiercc::info
