// The algorithm registry: for each collective, the algorithms that can run it, each with the
// builder that makes its plan and what it cannot run. Adding an algorithm is one builder file
// (plan/algorithms/) and one line in registry.cpp; the selector, TIERCC_ALGO, tiercc-perf
// --algo, tiercc-info and tiercc-sim find it here, and the executor runs its steps.
#pragma once

#include <string>
#include <vector>

#include "plan/plan.hpp"

namespace tiercc {

/// Paths a builder can plan, as a bitmask of 1 << Path.
inline constexpr unsigned kStagedOnly = 1u << static_cast<int>(Path::Staged);
inline constexpr unsigned kAnyPath =
    kStagedOnly | 1u << static_cast<int>(Path::ZeroCopy) | 1u << static_cast<int>(Path::CrossMemory);

struct AlgorithmEntry {
  Collective coll;
  Algorithm algorithm;
  /// Fills plan.steps and the fragments (the common fields are set): more than one rank.
  void (*build)(Plan& plan, const Request& req, const Shape& shape);
  /// Why it cannot run `req` on `shape` ("" if it can); null: it runs anything.
  std::string (*unsupported)(const Request& req, const Shape& shape) = nullptr;
  unsigned paths = kStagedOnly;  ///< the paths it can plan for a domain's steps
  /// Run only where TIERCC_ALGO asks for it: the cost model does not price what decides for or
  /// against it (the linear all-to-all: the CPU a socket transport spends, and many flows
  /// sharing a link).
  bool onlyWhenAsked = false;
};

/// The algorithms of a collective, in the order the selector lists them.
const std::vector<const AlgorithmEntry*>& algorithmsFor(Collective c);
/// "allreduce has no algorithm 'x' (it has: hierarchical, ...)" for an unknown name; "" if known.
std::string unknownAlgorithmReason(Collective c, const std::string& name);
/// Why (c, a) cannot run `req` on `shape` ("" if it can).
std::string unsupportedReason(Algorithm a, const Request& req, const Shape& shape);
/// Whether (req.coll, a) can plan `path` for a domain of `domainSize` ranks of `shape`.
bool supportsPath(Algorithm a, const Request& req, const Shape& shape, Path path, int domainSize);
/// The plan of `a` for `req` on `shape`, its domain steps on `path`. The algorithm must exist
/// and support the request and the path.
Plan buildPlan(Algorithm a, const Request& req, const Shape& shape, Path path = Path::Staged);

}  // namespace tiercc
