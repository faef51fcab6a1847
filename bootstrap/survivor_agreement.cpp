// Who goes on after a failure (see survivor_agreement.hpp).
#include "bootstrap/survivor_agreement.hpp"

#include <algorithm>
#include <sstream>
#include <thread>

#include "bootstrap/failure_detector.hpp"
#include "core/errors.hpp"

namespace tiercc {

namespace {

using Clock = std::chrono::steady_clock;

std::string aliveKey(const std::string& round, int rank) { return round + "alive/" + std::to_string(rank); }

std::string encodeRanks(const std::vector<int>& ranks) {
  std::string out;
  for (int r : ranks) out += (out.empty() ? "" : " ") + std::to_string(r);
  return out;
}

std::vector<int> decodeRanks(const std::string& text, int size) {
  std::vector<int> ranks;
  std::istringstream in(text);
  int r = 0;
  while (in >> r) {
    if (r < 0 || r >= size) fail(ErrorCode::Internal, "shrink: the published members hold rank ", r, " of ", size);
    ranks.push_back(r);
  }
  return ranks;
}

// A rank that has not announced yet: is its heartbeat still moving? The first read is no
// evidence of life (a dead rank's last beat stays in the store): only a change is.
struct Undecided {
  int rank;
  bool read = false;
  std::int64_t lastBeat = 0;
  Clock::time_point movedAt;
};

}  // namespace

std::vector<int> agreeOnSurvivors(Store& store, const std::string& round, int rank, int size,
                                  const SurvivorWatch& watch, Deadline deadline) {
  store.setString(aliveKey(round, rank), "1");
  std::vector<int> members{rank};
  std::vector<Undecided> undecided;
  const Clock::time_point start = Clock::now();
  for (int r = 0; r < size; ++r)
    if (r != rank) undecided.push_back({r, false, 0, start});
  while (!undecided.empty()) {
    const Clock::time_point now = Clock::now();
    std::erase_if(undecided, [&](Undecided& u) {
      if (store.check({aliveKey(round, u.rank)})) {
        members.push_back(u.rank);
        return true;
      }
      const std::string key = FailureDetector::beatKey(u.rank);
      const std::int64_t beat = store.check({key}) ? FailureDetector::beatCount(store.getString(key, deadline)) : -2;
      if (beat == -1) return true;  // it said goodbye: it left this communicator
      if (!u.read || beat != u.lastBeat) {
        if (u.read) u.movedAt = now;
        u.read = true;
        u.lastBeat = beat;
      }
      return now - u.movedAt >= watch.beatTimeout;
    });
    if (undecided.empty()) break;
    if (deadline.expired()) {
      std::vector<int> missing;
      for (const Undecided& u : undecided) missing.push_back(u.rank);
      fail(ErrorCode::Timeout, "shrink: rank(s) ", encodeRanks(missing),
           " neither joined the shrink nor stopped beating (every surviving rank must call shrink)");
    }
    std::this_thread::sleep_for(watch.poll);
  }
  std::sort(members.begin(), members.end());
  // The first to finish counting decides for everyone.
  if (store.add(round + "decided", 1) == 1) store.setString(round + "members", encodeRanks(members));
  return decodeRanks(store.getString(round + "members", deadline), size);
}

}  // namespace tiercc
