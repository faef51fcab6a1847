// The network model of tiercc-sim's exact mode: every rank has a scale-up port and a NIC, each
// with an outgoing and an incoming link, and the scale-out core is one shared link of the
// fabric's capacity. A step's flows all start together and share each link fairly, so a link
// is busy for (bytes on it) / bandwidth, and the step ends when its most loaded link is done:
//   step time = latencySteps x latency + max over links (bytes on link / link bandwidth)
// where latency is the scale-out one if any flow crosses domains. This is exact when every
// flow's bottleneck is that most loaded link (the patterns of the plans here, on uniform
// shapes); otherwise it is a lower bound of a max-min fair schedule.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "plan/plan.hpp"
#include "sim/cluster.hpp"

namespace tiercc::sim {

/// The links one step loads, per rank.
class LinkLoads {
 public:
  LinkLoads(const Shape& shape, const Cluster& cluster);

  /// A flow of `bytes` from `src` to `dst` (ranks). Across domains it loads src's NIC out,
  /// dst's NIC in and the fabric core; inside a domain src's and dst's scale-up ports, or their
  /// NICs when `inDomainOverNic` (tiercc's runtime: flat algorithms inside a domain).
  void addFlow(int src, int dst, double bytes, bool inDomainOverNic = false);
  /// Forget the flows (keeps the allocation).
  void clear();

  bool crosses() const { return crossed_; }
  /// Seconds the most loaded link needs for its bytes, fabric core included.
  double bandwidthSeconds() const;
  /// latencySteps x (scale-out latency if a flow crossed domains, else scale-up) + bandwidthSeconds.
  double stepSeconds(double latencySteps) const;

  double scaleUpBytes() const { return upBytes_; }
  double scaleOutBytes() const { return outBytes_; }
  int localRank(int r) const { return local_[r]; }
  const std::vector<double>& nicOut() const { return nicOut_; }
  const std::vector<double>& nicIn() const { return nicIn_; }
  const std::vector<double>& upOut() const { return upOut_; }
  const std::vector<double>& upIn() const { return upIn_; }
  double fabric() const { return fabric_; }

 private:
  const Shape& shape_;
  const Cluster& cluster_;
  std::vector<int> local_;
  std::vector<double> upOut_, upIn_, nicOut_, nicIn_;
  double fabric_ = 0, upBytes_ = 0, outBytes_ = 0;
  bool crossed_ = false;
};

using FlowFn = std::function<void(int src, int dst, double bytes)>;
/// Calls `fn` for every message of `step` (its Exchange, expanded rank by rank with the pattern
/// math); false, calling nothing, when the step's exchange is Unknown.
bool forEachFlow(const Step& step, const Shape& shape, const FlowFn& fn);
/// How many messages forEachFlow would produce (for bounding the exact mode).
double flowCount(const Step& step, const Shape& shape);

}  // namespace tiercc::sim
