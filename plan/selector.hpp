// The selector: for each call, prices every algorithm that can run it and picks the cheapest,
// unless TIERCC_ALGO forces one. Every rank takes the same decision: the inputs (request,
// shape, tier model, overrides) are the same on every rank, and the settings check at init
// makes ranks with different TIERCC_ALGO or model parameters stop before they could disagree.
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>

#include "plan/cost_model.hpp"
#include "plan/plan.hpp"

namespace tiercc {

/// TIERCC_ALGO: "collective:algorithm[,collective:algorithm...]"; an unknown collective or
/// algorithm is an InvalidArgument error that lists the valid names.
using AlgoOverrides = std::array<std::string, kNumCollectives>;
AlgoOverrides parseAlgoOverrides(const std::string& spec);

class Selector {
 public:
  Selector(Shape shape, TierModel model, AlgoOverrides overrides, std::size_t oneShotLimitBytes);

  const Shape& shape() const { return shape_; }
  const TierModel& model() const { return model_; }
  /// The algorithm for `req`. A forced algorithm that cannot run this request is an error
  /// (NotSupported, saying why), never a silent fallback. Decisions are cached per request
  /// shape; TIERCC_DEBUG_SUBSYS=TUNE logs each new one with every candidate's price.
  /// The name lives as long as the program (it is one of algorithmsFor()'s).
  /// Not thread-safe: a communicator runs its operations one at a time (OpQueue's exec lock),
  /// and with them its calls here; a small collective's path takes no lock for its choice.
  std::string_view choose(const Request& req);

 private:
  std::string_view decide(const Request& req) const;

  Shape shape_;
  TierModel model_;
  AlgoOverrides overrides_;
  std::size_t oneShotLimitBytes_;
  using Key = std::tuple<int, std::size_t, int, int, std::size_t>;
  std::map<Key, std::string_view> cache_;
  std::optional<std::pair<Key, std::string_view>> last_;  // the previous call's: loops repeat it
};

}  // namespace tiercc
