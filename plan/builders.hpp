// The plan builders, one file per family of collectives (internal to collectives/plan).
#pragma once

#include <string>

#include "plan/plan.hpp"

namespace tiercc::plans {

/// Fills plan.steps for `algorithm` (supported, more than one rank).
void build(Plan& plan, const std::string& algorithm, const Request& req, const Shape& shape);

void allreduce(Plan& plan, const std::string& algorithm, const Request& req, const Shape& shape);
void reduceScatterOrAllgather(Plan& plan, const std::string& algorithm, const Request& req, const Shape& shape);
void rooted(Plan& plan, const std::string& algorithm, const Request& req, const Shape& shape);
void alltoallOrBarrier(Plan& plan, const std::string& algorithm, const Request& req, const Shape& shape);

}  // namespace tiercc::plans
