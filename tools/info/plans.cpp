// tiercc-info's plan views (see plans.hpp): the runtime's own selector, plans and prices.
#include "tools/info/plans.hpp"

#include <algorithm>
#include <cstdio>
#include <iomanip>

#include "core/errors.hpp"
#include "core/params.hpp"
#include "core/units.hpp"
#include "plan/pipeline_depth.hpp"
#include "plan/registry.hpp"
#include "plan/selector.hpp"
#include "runtime/tier_model.hpp"

namespace tiercc::info {
namespace {

// Priced as a job of shared-memory domains on this host would be (a paced scale-up has no cache).
Selector selectorFor(const Shape& shape) {
  TierModel model = tierModelFromParams();
  model.cacheBytes = scaleUpPacingFromParams().paced() ? 0 : coreCacheBytes();
  return Selector(shape, model, parseAlgoOverrides(params::getString("TIERCC_ALGO")),
                  static_cast<std::size_t>(params::getInt("TIERCC_ALLREDUCE_ONESHOT_BYTES")));
}

// A request of `bytes` in nccl-tests' sense, in elements of `dt`.
Request requestFor(Collective coll, std::size_t bytes, DataType dt, const Shape& shape, std::size_t windowBytes) {
  Request req;
  req.coll = coll;
  req.dt = dt;
  req.radix = static_cast<int>(params::getInt("TIERCC_KNOMIAL_RADIX"));
  req.windowBytes = windowBytes;
  req.count = bytes / dataTypeSize(dt);
  if (coll == Collective::AllGather || coll == Collective::ReduceScatter || coll == Collective::AllToAll)
    req.count = std::max<std::size_t>(1, req.count / shape.size());
  return req;
}

std::string micros(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f us", seconds * 1e6);
  return buf;
}

}  // namespace

void printAlgorithms(std::ostream& out, int domains, int domainSize) {
  const Shape shape = Shape::uniformDomains(domains, domainSize);
  const Selector selector = selectorFor(shape);
  const TierModel& model = selector.model();
  const std::size_t window = windowSettingFromParams().resolve(shape, model);  // once, as at init
  out << "algorithms on " << domains << " domains x " << domainSize << " ranks (scale-up " << model.scaleUp.describe()
      << ", scale-out " << model.scaleOut.describe() << "; predicted time per candidate, * = chosen):\n";
  for (int c = 0; c < kNumCollectives; ++c) {
    const auto coll = static_cast<Collective>(c);
    if (coll == Collective::AllToAllv || coll == Collective::Send || coll == Collective::Recv) continue;
    for (std::size_t bytes : {std::size_t{8}, std::size_t{65536}, std::size_t{1} << 20, std::size_t{64} << 20}) {
      const Request req = requestFor(coll, bytes, DataType::U8, shape, window);
      const Algorithm chosen = selector.decide(req);
      out << "  " << std::left << std::setw(15) << toString(coll) << std::right << std::setw(10) << bytes << " B:";
      for (const AlgorithmEntry* e : algorithmsFor(coll)) {
        if (!unsupportedReason(e->algorithm, req, shape).empty()) continue;
        const Plan plan = buildAtBestDepth(e->algorithm, req, shape, model);
        if (!plan.unfit.empty()) continue;
        out << "  " << (e->algorithm == chosen ? "*" : "") << toString(e->algorithm) << " " << std::fixed
            << std::setprecision(1) << plan.predictedSeconds * 1e6 << "us";
        if (plan.slots > 1 && plan.fragments > 1) out << "/" << plan.slots << "slots";
        if (e->onlyWhenAsked) out << "/if-asked";
      }
      out << "\n";
      if (coll == Collective::Barrier) break;
    }
  }
}

void printPlan(std::ostream& out, const std::string& collName, int domains, int domainSize, std::size_t bytes,
               const std::string& pathName) {
  Collective coll;
  TIERCC_REQUIRE_ARG(parseCollective(collName, coll) && coll != Collective::Send && coll != Collective::Recv &&
                         coll != Collective::AllToAllv,
                     "--plan: no collective '", collName,
                     "' (allreduce, reduce_scatter, allgather, broadcast, reduce, alltoall, barrier)");
  Path path = Path::Staged;
  TIERCC_REQUIRE_ARG(pathName == "staged" || pathName == "zero_copy" || pathName == "cma", "--path: '", pathName,
                     "' is not staged, zero_copy or cma");
  if (pathName == "zero_copy") path = Path::ZeroCopy;
  if (pathName == "cma") path = Path::CrossMemory;
  const Shape shape = Shape::uniformDomains(domains, domainSize);
  const Selector selector = selectorFor(shape);
  const Request req =
      requestFor(coll, bytes, DataType::F32, shape, windowSettingFromParams().resolve(shape, selector.model()));
  const Algorithm algorithm = selector.decide(req);
  TIERCC_REQUIRE_ARG(supportsPath(algorithm, req, shape, path, domainSize) || path == Path::Staged, "--path ", pathName,
                     ": ", toString(coll), ":", toString(algorithm), " has no such path on ", domains, " domains of ",
                     domainSize);
  const Plan staged = buildAtBestDepth(algorithm, req, shape, selector.model());
  const Plan plan = path == Path::Staged ? staged : buildPlan(algorithm, atDepthOf(staged, req), shape, path);
  const Price priced = price(plan, selector.model());
  out << toString(coll) << " of " << plan.bytes << " B (f32) on " << domains << (domains == 1 ? " domain" : " domains")
      << " x " << domainSize << " ranks: " << toString(algorithm) << ", " << toString(path) << " path; "
      << plan.fragments << (plan.fragments == 1 ? " fragment" : " fragments") << " of " << plan.fragmentCount
      << " elements per block, " << plan.slots << " in flight, "
      << (plan.windowBytes < req.windowBytes ? concat("cut from ", plan.windowBytes, " B of ") : std::string())
      << "a window of " << req.windowBytes << " B per rank\n"
      << "tier model: scale-up " << selector.model().scaleUp.describe() << "; scale-out "
      << selector.model().scaleOut.describe() << "\n";
  out << "   step                 tier       group   reads -> writes          scale-up B    scale-out B    predicted\n";
  for (std::size_t i = 0; i < plan.steps.size(); ++i) {
    const Step& st = plan.steps[i];
    const std::string io = std::string(toString(st.in)) + " -> " + toString(st.out);
    out << std::right << std::setw(2) << i + 1 << " " << std::left << std::setw(20) << toString(st.kind) << " "
        << std::setw(10) << toString(st.tier) << " " << std::setw(7) << toString(st.group) << " " << std::setw(22) << io
        << std::right << std::setw(12) << st.scaleUpBytes << " " << std::setw(14) << st.scaleOutBytes << " "
        << std::setw(12) << micros(priced.stepSeconds[i]) << "  " << st.what << (st.perCall ? " (once per call)" : "")
        << "\n";
  }
  out << "predicted: " << micros(priced.seconds)
      << (plan.slots > 1 && plan.fragments > 1
              ? " (the fragments pipelined: the busier tier, or a fragment's trip over the slots, per fragment)"
              : " (the steps one after the other, less what runs under transfers it does not wait for)")
      << "\n";
  const double ratio = plan.boundBytes ? double(plan.scaleOutBytes()) / double(plan.boundBytes) : 0;
  out << "slow tier: " << plan.scaleOutBytes() << " B across domains, the bound is " << plan.boundBytes << " B";
  if (plan.boundBytes) out << " (" << std::fixed << std::setprecision(2) << ratio << "x)";
  out << "\n";
}

}  // namespace tiercc::info
