// The selector: for each call, prices every algorithm that can run it and picks the cheapest,
// unless TIERCC_ALGO forces one; then, for this rank's domain, the paths its steps may take.
// Every rank takes the same algorithm: its inputs (request, shape, tier model, overrides) are
// the same on every rank, and the settings check at init makes ranks with different
// TIERCC_ALGO or model parameters stop before they could disagree. The paths depend on the
// domain too (its size, whether it can read peers through the kernel): the same on every rank
// of it, which is all that must agree on a path.
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "plan/cost_model.hpp"
#include "plan/plan.hpp"

namespace tiercc {

/// TIERCC_PATH: "auto" (nothing forced), "staged", "zero_copy" or "cma"; anything else is an
/// InvalidArgument error that lists them.
std::optional<Path> parsePathOverride(const std::string& spec);

/// TIERCC_ALGO: "collective:algorithm[,collective:algorithm...]"; an unknown collective or
/// algorithm is an InvalidArgument error that lists the valid names.
using AlgoOverrides = std::array<std::optional<Algorithm>, kNumCollectives>;
AlgoOverrides parseAlgoOverrides(const std::string& spec);

/// What the selector knows of the rank it chooses for: its place (for its share of the bound)
/// and what the ranks of its domain can do beyond staging.
struct RankView {
  int rank = 0;
  int domainSize = 1;
  bool crossMemory = false;  ///< cross-memory attach works among them
  /// TIERCC_PATH: take this path wherever a plan and the buffers allow it, unpriced (staged:
  /// never a direct one; with one domain, an algorithm that can take it before one that cannot);
  /// unset, the cost model decides.
  std::optional<Path> forced;
};

/// A call's plans: the same algorithm on each path this domain may take where it is priced below
/// staging (zero copy, then cross-memory attach), and staged last. With more than one, the
/// executor's Agree step finds the first that every rank of the domain can take with the buffers
/// it was given.
struct Choice {
  Algorithm algorithm = Algorithm::Hierarchical;
  std::vector<Plan> plans;
  /// This rank's share of the plans' slow-tier bound: split evenly over the ranks, the
  /// remainders to the higher ones, so that the shares add up to it exactly (a send: all of it).
  std::uint64_t boundShare = 0;
  const Plan& staged() const { return plans.back(); }
};

class Selector {
 public:
  Selector(Shape shape, TierModel model, AlgoOverrides overrides, std::size_t oneShotLimitBytes, RankView view = {});
  Selector(const Selector&) = delete;  // recent_ points into cache_
  Selector& operator=(const Selector&) = delete;

  const Shape& shape() const { return shape_; }
  const TierModel& model() const { return model_; }
  /// The plans for `req`; `symmetricLive`: this domain has symmetric memory allocated, so the
  /// zero-copy path is worth agreeing on. A forced algorithm that cannot run this request is an
  /// error (NotSupported, saying why), never a silent fallback. Choices are cached per request;
  /// TIERCC_DEBUG_SUBSYS=TUNE logs each new one with every candidate's price. The reference lives
  /// until the next call. Not thread-safe: a communicator runs its operations one at a time.
  const Choice& choose(const Request& req, bool symmetricLive = false);
  /// The algorithm every rank takes for `req`: priced on the staged path, or with one domain
  /// (where every rank shares this view) on the cheapest path it may take.
  Algorithm decide(const Request& req, bool symmetricLive = false) const;

 private:
  Choice build(const Request& req, bool symmetricLive) const;
  /// The plans of `a` beyond staging this domain may take for `req`, at `staged`'s depth, each
  /// priced and kept only where cheaper than `staged`, or forced (TIERCC_PATH): zero copy, then
  /// cross-memory attach.
  std::vector<Plan> directPlans(Algorithm a, const Plan& staged, const Request& req, bool symmetricLive) const;

  Shape shape_;
  TierModel model_;
  AlgoOverrides overrides_;
  std::size_t oneShotLimitBytes_;
  RankView view_;
  /// What the plans depend on: a request's fields and whether symmetric memory is live.
  struct Key {
    Collective coll;
    DataType dt;
    bool symmetricLive;
    int root, peer;
    std::size_t count, totalBytes;
    auto operator<=>(const Key&) const = default;
  };
  std::map<Key, Choice> cache_;
  // The last two calls' (loops repeat them; a ring exchange alternates a send and a recv).
  std::array<std::pair<Key, const Choice*>, 2> recent_{};
};

}  // namespace tiercc
