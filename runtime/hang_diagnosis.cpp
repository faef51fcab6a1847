// The culprit of a hang, from the ranks' progress (see hang_diagnosis.hpp).
#include "runtime/hang_diagnosis.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>

#include "core/errors.hpp"

namespace tiercc {
namespace {

constexpr std::size_t kNamedAtMost = 8;  // culprits named one by one; the rest are counted

std::string secondsAgo(std::int64_t nowMs, std::int64_t thenMs) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f s ago", std::max<std::int64_t>(0, nowMs - thenMs) / 1000.0);
  return text;
}

// What a rank that has not entered #seq is doing instead.
std::string whereItIs(const Progress& p, std::int64_t nowMs) {
  if (p.entered < 0) return "it has not called any collective yet";
  if (p.state == OpState::Running) {
    std::string out = concat("it is still in ", p.current.describe(p.entered));
    if (p.steps) out += concat(", step ", p.step + 1, " of ", p.steps);
    if (p.waitingOn >= 0) out += concat(", waiting on rank ", p.waitingOn, " (", toString(p.waitTier), ")");
    return out;
  }
  if (p.state == OpState::Failed) return concat(p.current.describe(p.entered), " failed there");
  return concat("it completed #", p.completed, " ", secondsAgo(nowMs, p.completedAtMs),
                " and has not called a collective since");
}

// Every rank entered #seq: the hang is inside it. Who waits on whom says where: a chain of waits
// that ends at a rank running #seq and waiting on nobody ends at the rank stuck in its step (a
// stalled thread, a rank descheduled for seconds). The ranks waiting on it, directly or through
// others, are the messengers; this rank's own wait has ended (it timed out), so no chain ends here.
void stuckInside(const Topology& topo, std::int64_t seq, const std::vector<std::optional<Progress>>& all,
                 const std::function<void(std::string)>& name) {
  const int n = static_cast<int>(all.size());
  auto runningIt = [&](int r) {
    return r != topo.rank() && all[r] && !all[r]->hasLeft && all[r]->entered == seq &&
           all[r]->state == OpState::Running;
  };
  std::vector<std::vector<int>> heldUp(n);  // per chain end, the ranks whose waits end there
  for (int r = 0; r < n; ++r) {
    if (!runningIt(r) || all[r]->waitingOn < 0) continue;
    int at = r;
    for (int hops = 0; hops < n && runningIt(at) && all[at]->waitingOn >= 0 && all[at]->waitingOn < n; ++hops)
      at = all[at]->waitingOn;
    if (at != r && runningIt(at) && all[at]->waitingOn < 0) heldUp[at].push_back(r);
  }
  for (int r = 0; r < n; ++r) {
    if (heldUp[r].empty()) continue;
    const Progress& p = *all[r];
    std::string what = concat(topo.nameRank(r), " is in ", p.current.describe(seq));
    if (p.steps) what += concat(", step ", p.step + 1, " of ", p.steps);
    name(concat(what, ", and waits on no rank: it is stuck in that step (ranks ", rankRanges(heldUp[r]),
                " wait on it, directly or through others)"));
  }
}

}  // namespace

std::string rankRanges(const std::vector<int>& ranks) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ", ";
    out += j == i ? std::to_string(ranks[i]) : concat(ranks[i], j == i + 1 ? ", " : "-", ranks[j]);
    i = j + 1;
  }
  return out;
}

std::string diagnoseHang(const Topology& topo, std::int64_t seq, const CallSignature& mine,
                         const std::vector<std::optional<Progress>>& all, std::int64_t nowMs, bool* callsDiffer) {
  if (callsDiffer) *callsDiffer = false;
  const int n = static_cast<int>(all.size());
  auto callOf = [&](int r) -> const CallSignature& { return r == topo.rank() ? mine : all[r]->current; };
  auto entered = [&](int r) { return r == topo.rank() || (all[r] && !all[r]->hasLeft && all[r]->entered == seq); };
  // The call most ranks entered as #seq is the one the job meant (ties: the lowest rank's); the
  // others are mismatches, this rank's own included.
  std::vector<int> sameAs(n, -1);  // the lowest rank with a matching call
  int reference = -1, best = 0;
  for (int r = 0; r < n; ++r) {
    if (!entered(r)) continue;
    int first = r;
    for (int q = 0; q < r; ++q)
      if (sameAs[q] == q && callOf(q).matches(callOf(r))) first = q;
    sameAs[r] = first;
  }
  for (int r = 0; r < n; ++r) {
    if (sameAs[r] != r) continue;
    const int votes = static_cast<int>(std::count(sameAs.begin(), sameAs.end(), r));
    if (votes > best) best = votes, reference = r;
  }
  const CallSignature& meant = callOf(reference);
  std::vector<int> majority, waiting, silent, gone;
  for (int r = 0; r < n; ++r)
    if (entered(r) && sameAs[r] == reference) majority.push_back(r);

  std::vector<std::string> culprits;
  std::size_t more = 0;
  auto name = [&](std::string what) {
    if (culprits.size() < kNamedAtMost)
      culprits.push_back(std::move(what));
    else
      ++more;
  };
  for (int r = 0; r < n; ++r) {
    if (entered(r)) {
      if (sameAs[r] != reference) {
        if (callsDiffer) *callsDiffer = true;
        name(concat(topo.nameRank(r), " called ", callOf(r).describe(seq), " where ranks ", rankRanges(majority),
                    " called ", meant.describe(seq), ": the ranks' calls do not match"));
      } else if (r == topo.rank() || all[r]->completed < seq)
        waiting.push_back(r);
      continue;
    }
    if (!all[r]) {
      silent.push_back(r);
      continue;
    }
    if (all[r]->hasLeft) {
      gone.push_back(r);
      continue;
    }
    if (all[r]->entered < seq)
      name(concat(topo.nameRank(r), " has not entered ", meant.describe(seq), "; ", whereItIs(*all[r], nowMs)));
  }
  if (culprits.empty()) stuckInside(topo, seq, all, name);
  if (culprits.empty()) return "";
  std::string out;
  for (const std::string& c : culprits) out += (out.empty() ? "" : "; ") + c;
  if (more) out += concat("; and ", more, " more ranks like them");
  if (!silent.empty()) out += concat("; no progress published by ranks ", rankRanges(silent));
  if (!gone.empty()) out += concat("; ranks ", rankRanges(gone), " have left (their communicators are destroyed)");
  if (!waiting.empty()) out += concat("; waiting in ", meant.describe(seq), ": ranks ", rankRanges(waiting));
  return out;
}

}  // namespace tiercc
