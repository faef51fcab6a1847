// Plan basics: names, shapes, a plan's totals and description, and the slow-tier bound.
#include "plan/plan.hpp"

#include <algorithm>
#include <array>

#include "plan/build.hpp"
#include "plan/topology.hpp"

namespace tiercc {
namespace {

constexpr std::array<const char*, kNumCollectives> kCollectives = {
    "allreduce", "reduce_scatter", "allgather", "broadcast", "reduce",
    "alltoall",  "alltoallv",      "barrier",   "send",      "recv"};
constexpr std::array<const char*, kNumAlgorithms> kAlgorithms = {
    "hierarchical",       "one_shot",       "ring",  "halving_doubling",
    "recursive_doubling", "knomial",        "bruck", "pairwise",
    "dissemination",      "point_to_point", "linear"};
constexpr std::array<const char*, 5> kGroups = {"self", "domain", "rail", "world", "pair"};
constexpr std::array<const char*, kNumPaths> kPaths = {"staged", "zero_copy", "cma"};
constexpr std::array<const char*, 8> kBuffers = {"-",       "send",     "recv",        "window",
                                                 "scratch", "arrivals", "peers' send", "peers' recv"};
// In StepKind's order.
constexpr std::array<const char*, kNumStepKinds> kStepKinds = {"agree",
                                                               "stage",
                                                               "domain-reduce",
                                                               "one-shot",
                                                               "publish",
                                                               "domain-gather",
                                                               "close",
                                                               "rail-reduce",
                                                               "rail-copy",
                                                               "cross-exchange",
                                                               "local-reduce",
                                                               "ring-reduce-scatter",
                                                               "ring-allgather",
                                                               "fold",
                                                               "halving-reduce",
                                                               "doubling-gather",
                                                               "doubling-reduce",
                                                               "unfold",
                                                               "knomial-broadcast",
                                                               "knomial-reduce",
                                                               "bruck-allgather",
                                                               "bruck-rotate",
                                                               "bruck-alltoall",
                                                               "bruck-place",
                                                               "pairwise",
                                                               "dissemination",
                                                               "send",
                                                               "recv"};

template <class Enum, std::size_t N>
bool parseName(const std::array<const char*, N>& names, const std::string& name, Enum& out) {
  const auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end()) return false;
  out = static_cast<Enum>(it - names.begin());
  return true;
}

}  // namespace

const char* toString(Collective c) { return kCollectives[static_cast<int>(c)]; }
bool parseCollective(const std::string& name, Collective& out) { return parseName(kCollectives, name, out); }
const char* toString(Algorithm a) { return kAlgorithms[static_cast<int>(a)]; }
bool parseAlgorithm(const std::string& name, Algorithm& out) { return parseName(kAlgorithms, name, out); }
const char* toString(Tier t) { return t == Tier::ScaleOut ? "scale-out" : "scale-up"; }
const char* toString(Group g) { return kGroups[static_cast<int>(g)]; }
const char* toString(Path p) { return kPaths[static_cast<int>(p)]; }
const char* toString(Buffer b) { return kBuffers[static_cast<int>(b)]; }
const char* toString(StepKind k) { return kStepKinds[static_cast<int>(k)]; }

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

std::uint64_t Plan::sum(std::uint64_t Step::*field) const {
  std::uint64_t n = 0;
  for (const Step& s : steps) n += s.*field;
  return n;
}

// A pipelined plan is a pipeline of `slots` places that its F fragments go through one after
// another. Per fragment, the scale-up steps occupy the rank for up / F (it runs them itself and
// waits on its domain's flags), the scale-out steps occupy the NIC for out / F, and posted
// transfers spend inFlight / F on the wire, during which the rank runs other fragments. A
// fragment's trip through every step takes trip = (up + out + inFlight) / F; in the steady state
// a fragment leaves every period = max(up / F, out / F, trip / slots): the busier tier, unless
// too few fragments are in flight to cover a trip. Filling and draining add one trip:
//   time = (F - 1) period + trip.
// Without latency in flight and with two slots this is max(up, out) + min(up, out) / F.
// Scale-up steps that do not wait for the scale-out steps before them (Step::after) run while
// those steps' transfers are on the wire: up to those steps' time leaves the trip.
// The scale-up steps occupy different ranks where a rooted plan says so (Step::runner): the
// root's and the others' run side by side on different fragments, so `up` in the period is the
// steps every rank runs plus the busier side's. The trip still passes through all of them.
double Plan::combine(const std::vector<double>& stepSeconds, const std::vector<double>& inFlightSeconds) const {
  double up = 0, out = 0, inFlight = 0, overlapped = 0;
  double rootOnly = 0, othersOnly = 0;  // of `up`, what only the root or only the others run
  double onTheWire = 0;        // of the scale-out steps no later step has waited for yet
  std::uint64_t unwaited = 0;  // those steps (Step::after's bits)
  for (std::size_t i = 0; i < steps.size() && i < stepSeconds.size(); ++i) {
    if (steps[i].tier != Tier::ScaleOut) {
      up += stepSeconds[i];
      if (steps[i].runner == Runner::Root) rootOnly += stepSeconds[i];
      if (steps[i].runner == Runner::Others) othersOnly += stepSeconds[i];
      if (steps[i].after & unwaited) {
        onTheWire = 0;
        unwaited = 0;
      }
      const double hidden = std::min(stepSeconds[i], onTheWire);
      overlapped += hidden;
      onTheWire -= hidden;
      continue;
    }
    if (i < 64) unwaited |= std::uint64_t(1) << i;
    onTheWire += stepSeconds[i];
    // Once per call, a step's latency is paid once: other fragments do not hide it.
    const double flying =
        i < inFlightSeconds.size() && !steps[i].perCall ? std::min(inFlightSeconds[i], stepSeconds[i]) : 0;
    out += stepSeconds[i] - flying;
    inFlight += flying;
  }
  if (slots <= 1 || fragments <= 1) return up + out + inFlight - overlapped;
  const double F = fragments, trip = (up + out + inFlight - overlapped) / F;
  const double busiestRank = up - std::min(rootOnly, othersOnly);
  const double period = std::max({busiestRank / F, out / F, trip / slots});
  return (F - 1) * period + trip;
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
    case Collective::AllToAll:
      return plans::crossPairs(shape) * elementBytes;
    case Collective::AllToAllv: {
      // A whole matrix, or one rank's row (Request::root is then that rank): what crosses.
      if (!req.alltoallvBytes) return 0;
      const std::vector<std::uint64_t>& m = *req.alltoallvBytes;
      const bool row = m.size() == N;
      std::uint64_t cross = 0;
      for (std::size_t at = 0; at < m.size(); ++at) {
        const std::size_t from = row ? static_cast<std::size_t>(req.root) : at / N, to = at % N;
        if (shape.domainOf[from] != shape.domainOf[to]) cross += m[at];
      }
      return cross;
    }
    case Collective::Send:
      return shape.domainOf[req.root] != shape.domainOf[req.peer] ? elementBytes : 0;
    case Collective::Recv:  // the sender counts the message
    case Collective::Barrier:
      return 0;
  }
  return 0;
}

}  // namespace tiercc
