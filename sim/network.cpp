// The exact mode's links and the expansion of plan steps into flows (see network.hpp).
#include "sim/network.hpp"

#include <algorithm>

#include "plan/pattern/halving_doubling.hpp"
#include "plan/pattern/pattern.hpp"
#include "plan/pattern/ring.hpp"

namespace tiercc::sim {

LinkLoads::LinkLoads(const Shape& shape, const Cluster& cluster)
    : shape_(shape), cluster_(cluster), local_(shape.size()), upOut_(shape.size()), upIn_(shape.size()),
      nicOut_(shape.size()), nicIn_(shape.size()) {
  std::vector<int> seen(shape.numDomains(), 0);
  for (int r = 0; r < shape.size(); ++r) local_[r] = seen[shape.domainOf[r]]++;
}

void LinkLoads::addFlow(int src, int dst, double bytes, bool inDomainOverNic) {
  if (src == dst) return;  // a copy in the rank's own memory
  if (shape_.domainOf[src] != shape_.domainOf[dst]) {
    nicOut_[src] += bytes;
    nicIn_[dst] += bytes;
    fabric_ += bytes;
    outBytes_ += bytes;
    crossed_ = true;
  } else if (inDomainOverNic) {
    nicOut_[src] += bytes;
    nicIn_[dst] += bytes;
    upBytes_ += bytes;
  } else {
    upOut_[src] += bytes;
    upIn_[dst] += bytes;
    upBytes_ += bytes;
  }
}

void LinkLoads::clear() {
  for (auto* v : {&upOut_, &upIn_, &nicOut_, &nicIn_}) std::fill(v->begin(), v->end(), 0.0);
  fabric_ = upBytes_ = outBytes_ = 0;
  crossed_ = false;
}

double LinkLoads::bandwidthSeconds() const {
  auto peak = [](const std::vector<double>& v) { return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end()); };
  auto over = [](double bytes, double bw) { return bw > 0 ? bytes / bw : 0.0; };
  double s = std::max(over(std::max(peak(upOut_), peak(upIn_)), cluster_.scaleUp.bytesPerSec),
                      over(std::max(peak(nicOut_), peak(nicIn_)), cluster_.scaleOut.bytesPerSec));
  return std::max(s, over(fabric_, cluster_.fabricBytesPerSec()));
}

double LinkLoads::stepSeconds(double latencySteps) const {
  const double latency = crossed_ ? cluster_.scaleOut.latencySec : cluster_.scaleUp.latencySec;
  return latencySteps * latency + bandwidthSeconds();
}

namespace {

// Ranks of each domain, and of each rail (local rank below the smallest domain), in rank order.
std::vector<std::vector<int>> groupBy(const Shape& s, bool rails) {
  std::vector<std::vector<int>> groups(rails ? s.minDomainSize() : s.numDomains());
  std::vector<int> seen(s.numDomains(), 0);
  for (int r = 0; r < s.size(); ++r) {
    const int d = s.domainOf[r], local = seen[d]++;
    if (!rails) groups[d].push_back(r);
    else if (local < s.minDomainSize()) groups[local].push_back(r);
  }
  return groups;
}

void allPairs(const std::vector<int>& group, double bytes, const FlowFn& fn) {
  for (int a : group)
    for (int b : group)
      if (a != b) fn(a, b, bytes);
}

}  // namespace

bool forEachFlow(const Step& st, const Shape& s, const FlowFn& fn) {
  const int p = s.size();
  const double bytes = st.messageBytes;
  switch (st.exchange) {
    case Exchange::Unknown: return false;
    case Exchange::InDomain:
    case Exchange::Rail:
      for (const auto& group : groupBy(s, st.exchange == Exchange::Rail)) allPairs(group, bytes, fn);
      return true;
    case Exchange::Ring:
      for (int i = 0; i < p; ++i) fn(i, pattern::ringNext(p, i), bytes);
      return true;
    case Exchange::Shift:
      for (int i = 0; i < p; ++i) fn(i, pattern::wrap(static_cast<long long>(i) + st.exchangeParam, p), bytes);
      return true;
    case Exchange::Butterfly: {
      const pattern::Butterfly bf(p);
      for (int v = 0; v < bf.participants(); ++v) fn(bf.realRank(v), bf.realRank(v ^ st.exchangeParam), bytes);
      return true;
    }
    case Exchange::Fold: {
      const pattern::Butterfly bf(p);
      for (int i = 0; i < 2 * bf.extra(); i += 2)
        if (st.exchangeParam == 0) fn(i, bf.foldPartner(i), bytes);
        else fn(bf.foldPartner(i), i, bytes);
      return true;
    }
    case Exchange::All:
      for (int a = 0; a < p; ++a)
        for (int b = 0; b < p; ++b)
          if (a != b) fn(a, b, bytes);
      return true;
    case Exchange::Across:
      for (int a = 0; a < p; ++a)
        for (int b = 0; b < p; ++b)
          if (s.domainOf[a] != s.domainOf[b]) fn(a, b, bytes);
      return true;
  }
  return false;
}

double flowCount(const Step& st, const Shape& s) {
  const double p = s.size();
  switch (st.exchange) {
    case Exchange::Unknown: return 0;
    case Exchange::InDomain: return p * s.maxDomainSize();
    case Exchange::Rail: return double(s.minDomainSize()) * s.numDomains() * s.numDomains();
    case Exchange::All:
    case Exchange::Across:
      return p * p;
    default: return p;
  }
}

}  // namespace tiercc::sim
