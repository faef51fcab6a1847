// What tiercc-info says about plans without launching anything: the selector's choices with
// every candidate's price (--algorithms), and one chosen plan step by step (--plan).
#pragma once

#include <ostream>
#include <string>

namespace tiercc::info {

/// What the selector chooses on D domains x k ranks, at a few sizes, with each candidate's price.
void printAlgorithms(std::ostream& out, int domains, int domainSize);
/// The plan the selector chooses for `coll` of `bytes` (nccl-tests' size: the vector for
/// allreduce, broadcast and reduce, the whole output or input for the others) on D domains x k
/// ranks, on `path` ("staged", "zero_copy" or "cma"): its steps with their tier, group, bytes
/// and predicted time, then the slow-tier bytes against the bound. Throws InvalidArgument for a
/// name it does not know.
void printPlan(std::ostream& out, const std::string& coll, int domains, int domainSize, std::size_t bytes,
               const std::string& path);

}  // namespace tiercc::info
