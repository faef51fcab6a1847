// The plan builders, one file per algorithm (family), named in registry.cpp. Each fills a plan
// whose common fields buildPlan set: its fragments, its round protocol and its steps.
#pragma once

#include <string>

#include "plan/plan.hpp"

namespace tiercc::plans {

// Hierarchical, rail-parallel: inside the domains, along the rails, inside again.
void hierarchicalAllreduce(Plan& plan, const Request& req, const Shape& shape);  // and barrier
void hierarchicalReduceScatter(Plan& plan, const Request& req, const Shape& shape);
void hierarchicalAllgather(Plan& plan, const Request& req, const Shape& shape);
void hierarchicalBroadcast(Plan& plan, const Request& req, const Shape& shape);
void hierarchicalReduce(Plan& plan, const Request& req, const Shape& shape);
void hierarchicalAlltoall(Plan& plan, const Request& req, const Shape& shape);
// Small messages: every rank reduces its whole domain, then the rails exchange results.
void oneShot(Plan& plan, const Request& req, const Shape& shape);  // allreduce and barrier
std::string oneShotUnsupported(const Request& req, const Shape& shape);
// Flat patterns over the transport.
void ringAllreduce(Plan& plan, const Request& req, const Shape& shape);
void ringReduceScatter(Plan& plan, const Request& req, const Shape& shape);
void ringAllgather(Plan& plan, const Request& req, const Shape& shape);
void halvingDoublingAllreduce(Plan& plan, const Request& req, const Shape& shape);
void recursiveDoublingAllreduce(Plan& plan, const Request& req, const Shape& shape);
void knomialBroadcast(Plan& plan, const Request& req, const Shape& shape);
void knomialReduce(Plan& plan, const Request& req, const Shape& shape);
void bruckAllgather(Plan& plan, const Request& req, const Shape& shape);
void bruckAlltoall(Plan& plan, const Request& req, const Shape& shape);
void pairwiseAlltoall(Plan& plan, const Request& req, const Shape& shape);
void pairwiseAlltoallv(Plan& plan, const Request& req, const Shape& shape);
void disseminationBarrier(Plan& plan, const Request& req, const Shape& shape);
void pointToPoint(Plan& plan, const Request& req, const Shape& shape);  // send and recv

}  // namespace tiercc::plans
