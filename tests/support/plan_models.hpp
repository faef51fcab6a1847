// Requests and tier models the plan tests price with (plan_test, pipeline_depth_test).
#pragma once

#include <cstddef>

#include "plan/cost_model.hpp"
#include "plan/plan.hpp"

namespace tiercc {

inline Request request(Collective c, std::size_t count) {
  Request r;
  r.coll = c;
  r.count = count;
  r.dt = DataType::F32;
  r.totalBytes = count * 4;
  return r;
}

inline TierModel clusterLike() {
  TierModel m;
  m.scaleUp = {900e9, 1e-6};   // NVLink-class
  m.scaleOut = {100e9, 5e-6};  // 800G NIC
  m.transportInside = m.scaleUp;
  return m;
}

inline TierModel runtimeDefaults() {  // docs/parameters.md, on a CPU with 1 MiB of L2
  TierModel m;
  m.scaleUp = {12e9, 0.5e-6};
  m.scaleOut = m.transportInside = {1.25e9, 30e-6};
  m.local = {16e9, 0};
  m.crossMemory = {6.5e9, 3e-6};
  m.cacheBytes = 1 << 20;
  return m;
}

}  // namespace tiercc
