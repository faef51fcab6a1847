// The selector (see selector.hpp).
#include "plan/selector.hpp"

#include <sstream>

#include "core/errors.hpp"
#include "core/log.hpp"
#include "plan/pipeline_depth.hpp"
#include "plan/registry.hpp"

namespace tiercc {
namespace {

std::string collectiveNames() {
  std::string out;
  for (int c = 0; c < kNumCollectives; ++c) out += (c ? ", " : "") + std::string(toString(static_cast<Collective>(c)));
  return out;
}

// Bytes the busiest rank copies with its CPU: in its own memory, and from its domain's peers.
double copiedBytes(const Plan& plan) {
  double bytes = 0;
  for (const Step& st : plan.steps) bytes += st.localBytes + (st.tier == Tier::ScaleUp ? st.busiestBytes : 0);
  return bytes;
}

// A direct path is worth taking if it is priced below staging, or the same (within rounding:
// where the links limit, the copies hide behind them) while copying less: the CPU it saves is
// what the model does not price, the other ranks' and the transport's.
bool beatsStaging(const Plan& direct, const Plan& staged) {
  const double s = staged.predictedSeconds;
  return direct.predictedSeconds < s ||
         (direct.predictedSeconds <= s * (1 + 1e-9) && copiedBytes(direct) < copiedBytes(staged));
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
    const std::string name = item.substr(colon + 1);
    if (name == "auto") continue;
    const std::string why = unknownAlgorithmReason(c, name);
    if (!why.empty()) fail(ErrorCode::InvalidArgument, "TIERCC_ALGO: ", why);
    Algorithm a;
    parseAlgorithm(name, a);
    out[static_cast<int>(c)] = a;
  }
  return out;
}

std::optional<Path> parsePathOverride(const std::string& spec) {
  if (spec.empty() || spec == "auto") return std::nullopt;
  for (int p = 0; p < kNumPaths; ++p)
    if (spec == toString(static_cast<Path>(p))) return static_cast<Path>(p);
  fail(ErrorCode::InvalidArgument, "TIERCC_PATH: '", spec, "' is not auto, staged, zero_copy or cma");
}

Selector::Selector(Shape shape, TierModel model, AlgoOverrides overrides, std::size_t oneShotLimitBytes, RankView view)
    : shape_(std::move(shape)),
      model_(model),
      overrides_(overrides),
      oneShotLimitBytes_(oneShotLimitBytes),
      view_(view) {}

const Choice& Selector::choose(const Request& req, bool symmetricLive) {
  const Key key{req.coll, req.dt, symmetricLive, req.root, req.peer, req.count, req.totalBytes};
  for (const auto& [k, choice] : recent_)
    if (choice && k == key) return *choice;
  auto it = cache_.find(key);
  if (it == cache_.end()) {
    if (cache_.size() > 4096) {  // bounded: sweeps over many sizes do not grow it
      cache_.clear();
      recent_ = {};
    }
    it = cache_.emplace(key, build(req, symmetricLive)).first;
  }
  recent_[1] = recent_[0];
  recent_[0] = {key, &it->second};
  return it->second;
}

std::vector<Plan> Selector::directPlans(Algorithm a, const Plan& staged, const Request& req, bool symmetricLive) const {
  std::vector<Plan> out;
  const Request sameDepth = atDepthOf(staged, req);
  const std::pair<Path, bool> candidates[] = {{Path::ZeroCopy, symmetricLive}, {Path::CrossMemory, view_.crossMemory}};
  for (auto [path, possible] : candidates) {
    if (!possible || (view_.forced && *view_.forced != path) || !supportsPath(a, req, shape_, path, view_.domainSize))
      continue;
    Plan plan = buildPlan(a, sameDepth, shape_, path);
    const double seconds = plan.predictedSeconds = price(plan, model_).seconds;
    TIERCC_LOG(Trace, Tune) << toString(req.coll) << ":" << toString(a) << " " << plan.bytes << " B, " << toString(path)
                            << ": " << seconds * 1e6 << "us against " << staged.predictedSeconds * 1e6
                            << "us staged, copying " << copiedBytes(plan) << " B against " << copiedBytes(staged)
                            << " B";
    if (plan.unfit.empty() && (view_.forced || beatsStaging(plan, staged))) out.push_back(std::move(plan));
  }
  return out;
}

Algorithm Selector::decide(const Request& req, bool symmetricLive) const {
  const std::size_t bytes = req.count * dataTypeSize(req.dt);
  if (const std::optional<Algorithm> forced = overrides_[static_cast<int>(req.coll)]) {
    std::string why = unsupportedReason(*forced, req, shape_);
    if (why.empty()) why = buildPlan(*forced, req, shape_).unfit;
    if (!why.empty())
      fail(ErrorCode::NotSupported, "TIERCC_ALGO=", toString(req.coll), ":", toString(*forced),
           " cannot run here: ", why);
    TIERCC_LOG(Info, Tune) << toString(req.coll) << " " << bytes << " B: " << toString(*forced)
                           << " (forced by TIERCC_ALGO)";
    return *forced;
  }
  const AlgorithmEntry* best = nullptr;
  double bestSeconds = 0;
  bool bestTakesForced = false;  // on the path TIERCC_PATH forces
  std::ostringstream prices;
  for (const AlgorithmEntry* e : algorithmsFor(req.coll)) {
    if (e->onlyWhenAsked || !unsupportedReason(e->algorithm, req, shape_).empty()) continue;
    if (e->algorithm == Algorithm::OneShot && req.coll == Collective::AllReduce && bytes > oneShotLimitBytes_) continue;
    const Plan plan = buildAtBestDepth(e->algorithm, req, shape_, model_);
    if (!plan.unfit.empty()) continue;
    double seconds = plan.predictedSeconds;
    // One domain: every rank has this view of the paths, so an algorithm is priced on the
    // cheapest it may take, and where TIERCC_PATH forces one, those that can take it come first.
    // Across domains on the staged path alone: domains may differ in their paths, and every rank
    // must take the same algorithm.
    const char* path = "";
    if (shape_.numDomains() == 1)
      for (const Plan& direct : directPlans(e->algorithm, plan, req, symmetricLive))
        if (direct.predictedSeconds < seconds || view_.forced) {
          seconds = direct.predictedSeconds;
          path = toString(direct.path);
        }
    const bool takesForced = view_.forced && *path;
    prices << " " << toString(e->algorithm) << "=" << seconds * 1e6 << "us";
    if (*path) prices << "/" << path;
    if (plan.slots > 1) prices << "/" << plan.slots << "slots";
    if (!best || (takesForced && !bestTakesForced) || (takesForced == bestTakesForced && seconds < bestSeconds)) {
      best = e;
      bestSeconds = seconds;
      bestTakesForced = takesForced;
    }
  }
  if (!best)
    fail(ErrorCode::NotSupported, "no algorithm can run ", toString(req.coll), " of ", bytes, " B on ",
         shape_.numDomains(), " domains: raise TIERCC_SHM_CHUNK");
  TIERCC_LOG(Info, Tune) << toString(req.coll) << " " << bytes << " B on " << shape_.numDomains() << " domains x "
                         << shape_.maxDomainSize() << ": " << toString(best->algorithm) << " (prices:" << prices.str()
                         << ")";
  return best->algorithm;
}

Choice Selector::build(const Request& req, bool symmetricLive) const {
  Choice choice;
  choice.algorithm = decide(req, symmetricLive);
  Plan staged = buildAtBestDepth(choice.algorithm, req, shape_, model_);
  choice.plans = directPlans(choice.algorithm, staged, req, symmetricLive);
  // A send's bound is the sender's alone (a recv's plan has none).
  const std::uint64_t n = shape_.size(), r = view_.rank, bound = staged.boundBytes;
  choice.boundShare = req.coll == Collective::Send ? bound : (r + 1) * bound / n - r * bound / n;
  choice.plans.push_back(std::move(staged));
  return choice;
}

}  // namespace tiercc
