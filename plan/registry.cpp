// The algorithm registry (see registry.hpp): one line per (collective, algorithm).
#include "plan/registry.hpp"

#include <array>

#include "core/errors.hpp"
#include "plan/build.hpp"

namespace tiercc {
namespace {

constexpr unsigned kZeroCopy = kStagedOnly | 1u << static_cast<int>(Path::ZeroCopy);

struct Entry : AlgorithmEntry {
  unsigned pathsAcrossDomains = kStagedOnly;  ///< the paths it can plan when there are several domains
};

// In the order the selector lists them (and ties go to the first).
const std::vector<Entry>& table() {
  using C = Collective;
  using A = Algorithm;
  namespace b = plans;
  static const std::vector<Entry> kTable = {
      {{C::AllReduce, A::Hierarchical, b::hierarchicalAllreduce, nullptr, kAnyPath}, kAnyPath},
      {{C::AllReduce, A::OneShot, b::oneShot, b::oneShotUnsupported}},
      {{C::AllReduce, A::Ring, b::ringAllreduce}},
      {{C::AllReduce, A::HalvingDoubling, b::halvingDoublingAllreduce}},
      {{C::AllReduce, A::RecursiveDoubling, b::recursiveDoublingAllreduce}},
      {{C::ReduceScatter, A::Hierarchical, b::hierarchicalReduceScatter, nullptr, kAnyPath}},
      {{C::ReduceScatter, A::OneShot, b::oneShotGather, b::oneShotInDomainUnsupported}},
      {{C::ReduceScatter, A::Ring, b::ringReduceScatter}},
      {{C::AllGather, A::Hierarchical, b::hierarchicalAllgather, nullptr, kAnyPath}},
      {{C::AllGather, A::OneShot, b::oneShotGather, b::oneShotInDomainUnsupported}},
      {{C::AllGather, A::Ring, b::ringAllgather}},
      {{C::AllGather, A::Bruck, b::bruckAllgather}},
      {{C::Broadcast, A::Hierarchical, b::hierarchicalBroadcast, nullptr, kAnyPath}},
      {{C::Broadcast, A::OneShot, b::oneShotRooted, b::oneShotInDomainUnsupported}},
      {{C::Broadcast, A::Knomial, b::knomialBroadcast}},
      {{C::Reduce, A::Hierarchical, b::hierarchicalReduce, nullptr, kZeroCopy}},
      {{C::Reduce, A::OneShot, b::oneShotRooted, b::oneShotInDomainUnsupported}},
      {{C::Reduce, A::Knomial, b::knomialReduce}},
      {{C::AllToAll, A::Hierarchical, b::hierarchicalAlltoall, nullptr, kAnyPath}},
      {{C::AllToAll, A::Linear, b::linearAlltoall, nullptr, kAnyPath, true}, kAnyPath},
      {{C::AllToAll, A::OneShot, b::oneShotGather, b::oneShotInDomainUnsupported}},
      {{C::AllToAll, A::Pairwise, b::pairwiseAlltoall}},
      {{C::AllToAll, A::Bruck, b::bruckAlltoall}},
      {{C::AllToAllv, A::Pairwise, b::pairwiseAlltoallv}},
      {{C::Barrier, A::OneShot, b::oneShot, b::oneShotUnsupported}},
      {{C::Barrier, A::Hierarchical, b::hierarchicalAllreduce}},
      {{C::Barrier, A::Dissemination, b::disseminationBarrier}},
      {{C::Send, A::PointToPoint, b::pointToPoint}},
      {{C::Recv, A::PointToPoint, b::pointToPoint}},
  };
  return kTable;
}

const Entry* find(Collective c, Algorithm a) {
  for (const Entry& e : table())
    if (e.coll == c && e.algorithm == a) return &e;
  return nullptr;
}

bool plansPath(const Entry& e, const Shape& shape, Path path) {
  return ((shape.numDomains() > 1 ? e.pathsAcrossDomains : e.paths) & (1u << static_cast<int>(path))) != 0;
}

}  // namespace

const std::vector<const AlgorithmEntry*>& algorithmsFor(Collective c) {
  static const std::array<std::vector<const AlgorithmEntry*>, kNumCollectives> kByCollective = [] {
    std::array<std::vector<const AlgorithmEntry*>, kNumCollectives> out;
    for (const Entry& e : table()) out[static_cast<int>(e.coll)].push_back(&e);
    return out;
  }();
  return kByCollective[static_cast<int>(c)];
}

std::string unknownAlgorithmReason(Collective c, const std::string& name) {
  Algorithm a;
  if (parseAlgorithm(name, a) && find(c, a)) return "";
  std::string list;
  for (const AlgorithmEntry* e : algorithmsFor(c))
    list += (list.empty() ? "" : ", ") + std::string(toString(e->algorithm));
  return concat(toString(c), " has no algorithm '", name, "' (it has: ", list, ")");
}

std::string unsupportedReason(Algorithm a, const Request& req, const Shape& shape) {
  const Entry* e = find(req.coll, a);
  if (!e) return unknownAlgorithmReason(req.coll, toString(a));
  return e->unsupported ? e->unsupported(req, shape) : "";
}

bool supportsPath(Algorithm a, const Request& req, const Shape& shape, Path path, int domainSize) {
  const Entry* e = find(req.coll, a);
  return e && (path == Path::Staged || domainSize >= 2) && plansPath(*e, shape, path);
}

Plan buildPlan(Algorithm a, const Request& asked, const Shape& shape, Path path) {
  Request req = asked;
  if (req.coll == Collective::Barrier) {  // a one-byte allreduce, or empty messages
    req.count = 1;
    req.dt = DataType::U8;
  }
  const Entry* e = find(req.coll, a);
  if (!e) fail(ErrorCode::Internal, unknownAlgorithmReason(req.coll, toString(a)));
  if (!plansPath(*e, shape, path))
    fail(ErrorCode::Internal, toString(req.coll), ":", toString(a), " has no ", toString(path), " path on ",
         shape.numDomains(), " domains");
  Plan plan;
  plan.coll = req.coll;
  plan.algorithm = a;
  plan.path = path;
  plan.boundBytes = slowTierBound(req, shape);
  plan.count = req.count;
  plan.elementBytes = dataTypeSize(req.dt);
  plan.windowBytes = req.windowBytes;
  using C = Collective;
  const C c = req.coll;
  const bool perRank = c == C::ReduceScatter || c == C::AllGather || c == C::AllToAll;
  plan.bytes = c == C::AllToAllv ? req.totalBytes
               : c == C::Barrier ? 0
                                 : req.count * plan.elementBytes * (perRank ? shape.size() : 1);
  plan.root = c == C::Broadcast || c == C::Reduce ? req.root : c == C::Send || c == C::Recv ? req.peer : -1;
  e->build(plan, req, shape);
  auto& [first, end] = plan.fragmentSteps;
  while (first < plan.steps.size() && plan.steps[first].perCall) ++first;
  for (end = first; end < plan.steps.size() && !plan.steps[end].perCall;) ++end;
  return plan;
}

}  // namespace tiercc
