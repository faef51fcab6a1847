// The survivors of a communicator agree, through its store, on who goes on (ULFM's agree, for
// shrink). Each survivor announces itself; a rank that does not announce is out once its
// heartbeat has stood still for the heartbeat timeout (dead, stopped or hung: the same judgement
// as the failure detector's) or it said goodbye. The first survivor to finish that count
// publishes the members, and every survivor takes that list: ranks that judged a moment apart
// still end with one answer.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "tiercc/deadline.hpp"
#include "tiercc/store.hpp"

namespace tiercc {

struct SurvivorWatch {
  /// How long a heartbeat may stand still before its rank is judged failed (with the detector
  /// off there are no beats: a rank that has not announced by then is out).
  std::chrono::milliseconds beatTimeout{5000};
  std::chrono::milliseconds poll{50};  ///< how often the announcements and beats are read
};

/// Every survivor calls this with the same `round` (a fresh store namespace per agreement).
/// Returns the ranks that go on, ascending (this rank among them, unless the first to decide
/// judged it failed). Timeout at `deadline` naming the ranks that neither announced nor stopped
/// beating (alive but not calling: an application error).
std::vector<int> agreeOnSurvivors(Store& store, const std::string& round, int rank, int size,
                                  const SurvivorWatch& watch, Deadline deadline);

}  // namespace tiercc
