#include "bootstrap/failure_verdict.hpp"

namespace tiercc {

std::string agreeOnFailureVerdict(Store& store, const std::string& mine, Deadline deadline) {
  // add() is atomic in every store: exactly one rank gets 1 and writes the verdict.
  if (store.add("failure/claims", 1) == 1) {
    store.setString(kFailureVerdictKey, mine);
    return mine;
  }
  return store.getString(kFailureVerdictKey, deadline);
}

}  // namespace tiercc
