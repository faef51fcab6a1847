// Plan basics: shapes, names, the slow-tier bound, and the registry of algorithms.
#include "plan/plan.hpp"

#include <algorithm>
#include <array>
#include <sstream>

#include "plan/builders.hpp"
#include "core/errors.hpp"
#include "plan/topology.hpp"

namespace tiercc {
namespace {

constexpr std::array<const char*, kNumCollectives> kNames = {"allreduce", "reduce_scatter", "allgather", "broadcast",
                                                             "reduce",    "alltoall",       "alltoallv", "barrier"};

}  // namespace

const char* toString(Collective c) { return kNames[static_cast<int>(c)]; }

bool parseCollective(const std::string& name, Collective& out) {
  for (int i = 0; i < kNumCollectives; ++i)
    if (name == kNames[i]) {
      out = static_cast<Collective>(i);
      return true;
    }
  return false;
}

int Shape::minDomainSize() const {
  return domainSizes.empty() ? 0 : *std::min_element(domainSizes.begin(), domainSizes.end());
}
int Shape::maxDomainSize() const {
  return domainSizes.empty() ? 0 : *std::max_element(domainSizes.begin(), domainSizes.end());
}

Shape Shape::uniformDomains(int numDomains, int domainSize) {
  Shape s;
  s.domainSizes.assign(numDomains, domainSize);
  s.domainOf.reserve(static_cast<std::size_t>(numDomains) * domainSize);
  for (int d = 0; d < numDomains; ++d) s.domainOf.insert(s.domainOf.end(), domainSize, d);
  return s;
}

Shape shapeOf(const Topology& topo) {
  Shape s;
  for (int r = 0; r < topo.size(); ++r) s.domainOf.push_back(topo.domainOf(r));
  for (int d = 0; d < topo.numDomains(); ++d) s.domainSizes.push_back(topo.domainSize(d));
  return s;
}

std::uint64_t Plan::scaleUpBytes() const {
  std::uint64_t n = 0;
  for (const Step& s : steps) n += s.scaleUpBytes;
  return n;
}

std::uint64_t Plan::scaleOutBytes() const {
  std::uint64_t n = 0;
  for (const Step& s : steps) n += s.scaleOutBytes;
  return n;
}

std::string Plan::describe() const {
  std::ostringstream out;
  out << toString(coll) << " " << bytes << " B, " << algorithm << ": scale-out " << scaleOutBytes() << " B (bound "
      << boundBytes << " B), scale-up " << scaleUpBytes() << " B";
  if (pipelinedRounds > 1) out << ", " << pipelinedRounds << " rounds, two in flight (the tiers overlap)";
  for (const Step& s : steps)
    out << "\n  " << (s.tier == Tier::ScaleOut ? "[out] " : "[up]  ") << s.what << ": " << s.latencySteps
        << " latency steps, busiest link " << static_cast<std::uint64_t>(s.busiestBytes) << " B";
  return out.str();
}

double Plan::combine(const std::vector<double>& stepSeconds) const {
  double up = 0, out = 0;
  for (std::size_t i = 0; i < steps.size() && i < stepSeconds.size(); ++i)
    (steps[i].tier == Tier::ScaleOut ? out : up) += stepSeconds[i];
  if (pipelinedRounds <= 1) return up + out;
  return std::max(up, out) + std::min(up, out) / pipelinedRounds;
}

std::uint64_t slowTierBound(const Request& req, const Shape& shape) {
  const std::uint64_t es = dataTypeSize(req.dt), D = shape.numDomains(), N = shape.size();
  const std::uint64_t elementBytes = req.count * es;
  switch (req.coll) {
    case Collective::AllReduce:
      return 2 * (D - 1) * elementBytes;
    case Collective::ReduceScatter:
    case Collective::AllGather:
      return (D - 1) * N * elementBytes;
    case Collective::Broadcast:
    case Collective::Reduce:
      return (D - 1) * elementBytes;
    case Collective::AllToAll: {
      std::uint64_t cross = 0;
      for (int k : shape.domainSizes) cross += static_cast<std::uint64_t>(k) * (N - k);
      return cross * elementBytes;
    }
    case Collective::AllToAllv:  // depends on the counts, which only the ranks know
    case Collective::Barrier:
      return 0;
  }
  return 0;
}

const std::vector<std::string>& algorithmsFor(Collective c) {
  static const std::array<std::vector<std::string>, kNumCollectives> kAlgorithms = {{
      {"hierarchical", "one_shot", "ring", "halving_doubling", "recursive_doubling"},  // allreduce
      {"hierarchical", "ring"},                                                        // reduce_scatter
      {"hierarchical", "ring", "bruck"},                                               // allgather
      {"hierarchical", "knomial"},                                                     // broadcast
      {"hierarchical", "knomial"},                                                     // reduce
      {"hierarchical", "pairwise", "bruck"},                                           // alltoall
      {"pairwise"},                                                                    // alltoallv
      {"one_shot", "hierarchical", "dissemination"},                                   // barrier
  }};
  return kAlgorithms[static_cast<int>(c)];
}

std::string unsupportedReason(const std::string& algorithm, const Request& req, const Shape& shape) {
  const auto& known = algorithmsFor(req.coll);
  if (std::find(known.begin(), known.end(), algorithm) == known.end()) {
    std::string list;
    for (const auto& a : known) list += (list.empty() ? "" : ", ") + a;
    return concat(toString(req.coll), " has no algorithm '", algorithm, "' (it has: ", list, ")");
  }
  if (algorithm == "one_shot") {
    const std::size_t bytes = req.coll == Collective::Barrier ? 1 : req.count * dataTypeSize(req.dt);
    const std::size_t domains = std::max(1, shape.numDomains());
    if (!shape.uniform()) return "one_shot needs domains of equal size (every rank needs a rail peer)";
    if (bytes * domains > req.windowBytes)
      return concat("one_shot needs the ", domains, " domain results of ", bytes, " B to fit the window (",
                    req.windowBytes, " B)");
  }
  return "";
}

Plan buildPlan(const std::string& algorithm, const Request& req, const Shape& shape) {
  Plan plan;
  plan.coll = req.coll;
  plan.algorithm = algorithm;
  plan.boundBytes = slowTierBound(req, shape);
  const std::size_t es = dataTypeSize(req.dt);
  switch (req.coll) {
    case Collective::AllReduce:
    case Collective::Broadcast:
    case Collective::Reduce:
      plan.bytes = req.count * es;
      break;
    case Collective::ReduceScatter:
    case Collective::AllGather:
    case Collective::AllToAll:
      plan.bytes = req.count * es * shape.size();
      break;
    case Collective::AllToAllv:
      plan.bytes = req.totalBytes;
      break;
    case Collective::Barrier:
      plan.bytes = 0;
      break;
  }
  if (shape.size() <= 1) return plan;  // nothing moves
  plans::build(plan, algorithm, req, shape);
  // These move data inside a domain through its windows, not over the transport.
  if (algorithm == "hierarchical" || algorithm == "one_shot")
    for (Step& st : plan.steps) st.overTransport = st.tier == Tier::ScaleOut;
  return plan;
}

namespace plans {

void build(Plan& plan, const std::string& algorithm, const Request& req, const Shape& shape) {
  switch (req.coll) {
    case Collective::AllReduce:
      return allreduce(plan, algorithm, req, shape);
    case Collective::ReduceScatter:
    case Collective::AllGather:
      return reduceScatterOrAllgather(plan, algorithm, req, shape);
    case Collective::Broadcast:
    case Collective::Reduce:
      return rooted(plan, algorithm, req, shape);
    case Collective::AllToAll:
    case Collective::AllToAllv:
    case Collective::Barrier:
      return alltoallOrBarrier(plan, algorithm, req, shape);
  }
}

}  // namespace plans

}  // namespace tiercc
