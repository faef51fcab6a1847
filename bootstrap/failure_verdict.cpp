#include "bootstrap/failure_verdict.hpp"

namespace tiercc {

bool publishFailureVerdict(Store& store, const std::string& mine) {
  // add() is atomic in every store: exactly one rank gets 1 and writes the verdict.
  if (store.add("failure/claims", 1) != 1) return false;
  store.setString(kFailureVerdictKey, mine);
  return true;
}

std::string agreeOnFailureVerdict(Store& store, const std::string& mine, Deadline deadline) {
  if (publishFailureVerdict(store, mine)) return mine;
  return store.getString(kFailureVerdictKey, deadline);
}

}  // namespace tiercc
