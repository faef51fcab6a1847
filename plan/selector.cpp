// The selector (see selector.hpp).
#include "plan/selector.hpp"

#include <algorithm>
#include <sstream>

#include "core/errors.hpp"
#include "core/log.hpp"

namespace tiercc {
namespace {

std::string collectiveNames() {
  std::string out;
  for (int c = 0; c < kNumCollectives; ++c) out += (c ? ", " : "") + std::string(toString(static_cast<Collective>(c)));
  return out;
}

}  // namespace

AlgoOverrides parseAlgoOverrides(const std::string& spec) {
  AlgoOverrides out;
  std::stringstream items(spec);
  std::string item;
  while (std::getline(items, item, ',')) {
    if (item.empty()) continue;
    const auto colon = item.find(':');
    Collective c;
    TIERCC_REQUIRE_ARG(colon != std::string::npos, "TIERCC_ALGO: '", item,
                       "' is not collective:algorithm (e.g. allreduce:ring; collectives: ", collectiveNames(), ")");
    TIERCC_REQUIRE_ARG(parseCollective(item.substr(0, colon), c), "TIERCC_ALGO: unknown collective '",
                       item.substr(0, colon), "' (valid: ", collectiveNames(), ")");
    Request probe;
    probe.coll = c;
    const std::string algo = item.substr(colon + 1);
    if (algo == "auto") continue;
    const auto& known = algorithmsFor(c);
    if (std::find(known.begin(), known.end(), algo) == known.end())
      fail(ErrorCode::InvalidArgument, "TIERCC_ALGO: ", unsupportedReason(algo, probe, Shape{}));
    out[static_cast<int>(c)] = algo;
  }
  return out;
}

Selector::Selector(Shape shape, TierModel model, AlgoOverrides overrides, std::size_t oneShotLimitBytes)
    : shape_(std::move(shape)),
      model_(model),
      overrides_(std::move(overrides)),
      oneShotLimitBytes_(oneShotLimitBytes) {}

std::string_view Selector::choose(const Request& req) {
  const Key key{static_cast<int>(req.coll), req.count * dataTypeSize(req.dt), req.root, req.radix, req.totalBytes};
  if (last_ && last_->first == key) return last_->second;
  auto it = cache_.find(key);
  if (it == cache_.end()) {
    if (cache_.size() > 4096) cache_.clear();  // bounded: sweeps over many sizes do not grow it
    it = cache_.emplace(key, decide(req)).first;
  }
  last_.emplace(key, it->second);
  return it->second;
}

std::string_view Selector::decide(const Request& req) const {
  const std::string& forced = overrides_[static_cast<int>(req.coll)];
  if (!forced.empty()) {
    const std::string why = unsupportedReason(forced, req, shape_);
    if (!why.empty())
      fail(ErrorCode::NotSupported, "TIERCC_ALGO=", toString(req.coll), ":", forced, " cannot run here: ", why);
    TIERCC_LOG(Info, Tune) << toString(req.coll) << " " << req.count * dataTypeSize(req.dt) << " B: " << forced
                           << " (forced by TIERCC_ALGO)";
    const auto& known = algorithmsFor(req.coll);
    return *std::find(known.begin(), known.end(), forced);  // parseAlgoOverrides checked it is there
  }
  const std::size_t bytes = req.count * dataTypeSize(req.dt);
  const std::string* best = nullptr;  // points into algorithmsFor(): lives as long as the program
  double bestSeconds = 0;
  std::ostringstream prices;
  for (const std::string& algo : algorithmsFor(req.coll)) {
    if (!unsupportedReason(algo, req, shape_).empty()) continue;
    if (algo == "one_shot" && req.coll == Collective::AllReduce && bytes > oneShotLimitBytes_) continue;
    const Plan plan = buildPlan(algo, req, shape_);
    const double seconds = price(plan, model_).seconds;
    prices << " " << algo << "=" << seconds * 1e6 << "us";
    if (!best || seconds < bestSeconds) {
      best = &algo;
      bestSeconds = seconds;
    }
  }
  if (!best) fail(ErrorCode::Internal, "no algorithm can run ", toString(req.coll), " of ", bytes, " B");
  TIERCC_LOG(Info, Tune) << toString(req.coll) << " " << bytes << " B on " << shape_.numDomains() << " domains x "
                         << shape_.maxDomainSize() << ": " << *best << " (prices:" << prices.str() << ")";
  return *best;
}

}  // namespace tiercc
