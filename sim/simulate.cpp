// The two pricing modes of tiercc-sim (see simulate.hpp).
#include "sim/simulate.hpp"

#include <algorithm>

#include "core/errors.hpp"
#include "core/params.hpp"
#include "plan/pipeline_depth.hpp"
#include "plan/registry.hpp"
#include "plan/selector.hpp"
#include "sim/network.hpp"

namespace tiercc::sim {
namespace {

double over(double bytes, double bytesPerSec) { return bytesPerSec > 0 ? bytes / bytesPerSec : 0; }

// Per rail, by symmetry: rail exchanges, and all-to-all ones on uniform domains, load every rail
// alike; other steps are expanded (O(ranks) messages each).
bool railsBySymmetry(const Step& st, const Shape& s) {
  // A Rail exchange runs on the smallest domain's rails, each with one rank per domain, alike
  // even when domains are not.
  return st.scaleOutBytes == 0 || st.exchange == Exchange::Rail ||
         (s.uniform() &&
          (st.exchange == Exchange::All || st.exchange == Exchange::Across || st.exchange == Exchange::Unknown));
}

Result symmetric(const Plan& plan, const Shape& s, const Cluster& c) {
  Result r;
  const TierModel model = c.tierModel();
  const Price priced = price(plan, model);  // the runtime's own price: the selector's
  r.seconds = priced.seconds;
  r.stepSeconds = priced.stepSeconds;
  const int rails = s.minDomainSize();
  r.railBytes.assign(rails, 0.0);
  std::vector<int> local(s.size());
  {
    std::vector<int> seen(s.numDomains(), 0);
    for (int i = 0; i < s.size(); ++i) local[i] = seen[s.domainOf[i]]++;
  }
  double outBusy = 0, upBusy = 0;
  for (const Step& st : plan.steps) {
    r.fabricSeconds += over(double(st.scaleOutBytes), c.fabricBytesPerSec());
    r.scaleUpBytes += double(st.scaleUpBytes);
    r.scaleOutBytes += double(st.scaleOutBytes);
    if (st.tier == Tier::ScaleOut)
      outBusy += st.busiestBytes;
    else
      upBusy += st.busiestBytes;
    if (railsBySymmetry(st, s)) {
      for (double& b : r.railBytes) b += double(st.scaleOutBytes) / rails;
    } else if (flowCount(st, s) > kExactMaxFlows) {
      r.railBytes.clear();  // too many messages to follow one by one: per rail unknown
    } else if (!r.railBytes.empty()) {
      forEachFlow(st, s, [&](int a, int b, double bytes) {
        if (s.domainOf[a] != s.domainOf[b] && local[a] < rails) r.railBytes[local[a]] += bytes;
      });
    }
  }
  r.busiestScaleOut = {"a NIC, one direction (the busiest of every scale-out step)", outBusy,
                       over(outBusy, c.scaleOut.bytesPerSec)};
  r.busiestScaleUp = {"a scale-up port, one direction (the busiest of every scale-up step)", upBusy,
                      over(upBusy, model.scaleUp.bytesPerSec)};
  return r;
}

Result exact(const Plan& plan, const Shape& s, const Cluster& c) {
  Result r;
  r.mode = Mode::Exact;
  const TierModel model = c.tierModel();
  LinkLoads loads(s, c);
  const std::size_t n = static_cast<std::size_t>(s.size());
  std::vector<double> nicOut(n), nicIn(n), upOut(n), upIn(n);
  r.railBytes.assign(s.maxDomainSize(), 0.0);
  std::vector<double> inFlight;  // Price::inFlightSeconds, per step
  for (const Step& st : plan.steps) {
    if (flowCount(st, s) > kExactMaxFlows)
      fail(ErrorCode::InvalidArgument, "exact mode: step '", st.what, "' has ", flowCount(st, s),
           " messages; use the symmetric mode (drop --exact) for this many ranks");
    loads.clear();
    const bool overNic = st.overTransport && !c.flatInsideOnScaleUp;
    const bool expanded = forEachFlow(st, s, [&](int a, int b, double bytes) {
      loads.addFlow(a, b, bytes, overNic);
      if (s.domainOf[a] != s.domainOf[b]) r.railBytes[loads.localRank(a)] += bytes;
    });
    double seconds = 0;
    if (expanded) {
      seconds = loads.stepSeconds(st.latencySteps);
      r.scaleUpBytes += loads.scaleUpBytes();
      r.scaleOutBytes += loads.scaleOutBytes();
      r.fabricSeconds += over(loads.fabric(), c.fabricBytesPerSec());
      for (std::size_t i = 0; i < n; ++i) {
        nicOut[i] += loads.nicOut()[i];
        nicIn[i] += loads.nicIn()[i];
        upOut[i] += loads.upOut()[i];
        upIn[i] += loads.upIn()[i];
      }
    } else {
      // No per-rank description: the step as the cost model prices it, its bytes spread evenly.
      seconds = stepSeconds(st, model);
      r.scaleUpBytes += double(st.scaleUpBytes);
      r.scaleOutBytes += double(st.scaleOutBytes);
      auto& busy = st.tier == Tier::ScaleOut ? nicOut : upIn;
      for (double& b : busy) b += st.busiestBytes;  // every rank as loaded as the busiest
      const int rails = s.minDomainSize();
      for (int k = 0; k < rails; ++k) r.railBytes[k] += double(st.scaleOutBytes) / rails;
      ++r.stepsPricedWhole;
    }
    r.stepSeconds.push_back(seconds);
    // The cost model's, except for an expanded step whose flows stayed inside domains: its
    // latency was the scale-up one, which the rank waits out itself.
    inFlight.push_back(expanded && !loads.crosses() ? 0 : inFlightSeconds(st, model));
  }
  r.seconds = plan.combine(r.stepSeconds, inFlight);
  auto busiest = [&](const std::vector<double>& v, const char* what, double bw) {
    const auto it = std::max_element(v.begin(), v.end());
    const int rank = static_cast<int>(it - v.begin());
    return BusiestLink{std::string(what) + " of rank " + std::to_string(rank) + " (domain " +
                           std::to_string(s.domainOf[rank]) + ", rail " + std::to_string(loads.localRank(rank)) + ")",
                       *it, over(*it, bw)};
  };
  const BusiestLink o = busiest(nicOut, "NIC out", c.scaleOut.bytesPerSec),
                    i = busiest(nicIn, "NIC in", c.scaleOut.bytesPerSec);
  r.busiestScaleOut = o.bytes >= i.bytes ? o : i;
  const BusiestLink uo = busiest(upOut, "scale-up port out", model.scaleUp.bytesPerSec),
                    ui = busiest(upIn, "scale-up port in", model.scaleUp.bytesPerSec);
  r.busiestScaleUp = uo.bytes >= ui.bytes ? uo : ui;
  return r;
}

}  // namespace

Plan planFor(const std::string& algorithm, const Request& req, const Shape& shape, const Cluster& cluster) {
  if (algorithm != "auto") {
    std::string why = unknownAlgorithmReason(req.coll, algorithm);
    Algorithm a = Algorithm::Hierarchical;
    if (why.empty()) {
      parseAlgorithm(algorithm, a);
      why = unsupportedReason(a, req, shape);
    }
    if (!why.empty()) fail(ErrorCode::InvalidArgument, "--algo ", algorithm, ": ", why);
    return buildAtBestDepth(a, req, shape, cluster.tierModel());
  }
  const std::size_t oneShot =
      static_cast<std::size_t>(std::max<std::int64_t>(0, params::getInt("TIERCC_ALLREDUCE_ONESHOT_BYTES")));
  const Selector selector(shape, cluster.tierModel(), AlgoOverrides{}, oneShot);
  return buildAtBestDepth(selector.decide(req), req, shape, cluster.tierModel());
}

Result simulate(const Plan& plan, const Shape& shape, const Cluster& cluster, Mode mode) {
  return mode == Mode::Exact ? exact(plan, shape, cluster) : symmetric(plan, shape, cluster);
}

double busFactor(Collective c, int n) {
  if (n <= 1) return 1;
  switch (c) {
    case Collective::AllReduce:
      return 2.0 * (n - 1) / n;
    case Collective::ReduceScatter:
    case Collective::AllGather:
    case Collective::AllToAll:
    case Collective::AllToAllv:
      return double(n - 1) / n;
    default:
      return 1;
  }
}

double boundSeconds(const Plan& plan, const Shape& shape, const Cluster& cluster) {
  const double perNic = double(plan.boundBytes) / std::max(1, shape.size());
  return std::max(over(perNic, cluster.scaleOut.bytesPerSec),
                  over(double(plan.boundBytes), cluster.fabricBytesPerSec()));
}

double busiestLinkSeconds(const Result& r, const Plan& plan, const Shape& shape, const Cluster& cluster) {
  return std::max({r.busiestScaleUp.seconds, r.busiestScaleOut.seconds, boundSeconds(plan, shape, cluster)});
}

}  // namespace tiercc::sim
