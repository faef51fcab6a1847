// The tier probe (see tier_probe.hpp).
#include "runtime/tier_probe.hpp"

#include <algorithm>
#include <charconv>
#include <sstream>

#include "bootstrap/store.hpp"
#include "core/copy.hpp"
#include "core/errors.hpp"
#include "core/log.hpp"
#include "plan/topology.hpp"
#include "scaleup-emu/domain.hpp"
#include "transport/transport.hpp"

namespace tiercc {
namespace {

constexpr int kLatencyWarmup = 4, kLatencyShifts = 16;
constexpr int kBandwidthShifts = 4;  // the first warms the connection up and is not timed
constexpr std::size_t kBandwidthBytes = 1u << 20;
constexpr std::uint64_t kProbeTag = 0x7072'6f62'0000'0000ull;  // "prob": before any collective's tags

double secondsSince(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[(v.size() - 1) / 2];  // the lower middle: no averaging, the same bits on every rank
}

// Hexadecimal floats: exact, so every rank decodes the very figures rank 0 chose.
std::string hexDouble(double v) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::hex);
  return std::string(buf, res.ptr);
}

std::optional<double> parseField(const std::string& text, const std::string& all) {
  if (text == "-") return std::nullopt;
  double v = 0;
  auto res = std::from_chars(text.data(), text.data() + text.size(), v, std::chars_format::hex);
  if (res.ec != std::errc() || res.ptr != text.data() + text.size() || !(v >= 0))
    fail(ErrorCode::InvalidArgument, "tier probe: malformed sample '", all, "'");
  return v;
}

std::string field(const std::optional<double>& v) { return v ? hexDouble(*v) : "-"; }

std::vector<std::optional<double>> parseFields(const std::string& text, std::size_t n) {
  std::istringstream in(text);
  std::vector<std::optional<double>> out;
  std::string word;
  while (in >> word) out.push_back(parseField(word, text));
  if (out.size() != n) fail(ErrorCode::InvalidArgument, "tier probe: malformed sample '", text, "'");
  return out;
}

// Shifts `len` bytes along the rail: to `next`, from `prev`, both in flight at once.
void shift(Transport& t, int next, int prev, std::byte* out, std::byte* in, std::size_t len, std::uint64_t tag,
           Deadline deadline) {
  TransferOp send, recv;
  send.peer = next;
  send.isSend = true;
  send.tag = recv.tag = tag;
  send.buf = out;
  send.len = recv.len = len;
  recv.peer = prev;
  recv.buf = in;
  t.isend(send);
  t.irecv(recv);
  t.wait({&send, &recv}, deadline, "tier probe (scale-out, at init)");
}

void probeScaleOut(const Topology& topo, Transport& t, ProbeSample& s, Deadline deadline) {
  const int D = topo.numDomains(), d = topo.domain(), r = topo.localRank();
  const int next = topo.rankAt((d + 1) % D, r), prev = topo.rankAt((d + D - 1) % D, r);
  std::vector<std::byte> out(kBandwidthBytes, std::byte{1}), in(kBandwidthBytes);
  std::uint64_t tag = kProbeTag;
  std::vector<double> latencies;
  for (int i = 0; i < kLatencyWarmup + kLatencyShifts; ++i) {
    const auto t0 = Clock::now();
    shift(t, next, prev, out.data(), in.data(), 8, tag++, deadline);
    if (i >= kLatencyWarmup) latencies.push_back(secondsSince(t0));
  }
  const double latency = median(latencies);
  std::vector<double> times;
  for (int i = 0; i < kBandwidthShifts; ++i) {
    const auto t0 = Clock::now();
    shift(t, next, prev, out.data(), in.data(), kBandwidthBytes, tag++, deadline);
    if (i > 0) times.push_back(secondsSince(t0));
  }
  // The latency is paid once per step; what remains is the bytes on the link.
  const double transfer = std::max(median(times) - latency, 1e-9);
  s.scaleOutLatencySec = latency;
  s.scaleOutBytesPerSec = kBandwidthBytes / transfer;
}

void probeScaleUp(Domain& dom, ProbeSample& s) {
  const std::size_t bytes = dom.windowBytes();
  const int peer = (dom.localRank() + 1) % dom.size();
  std::vector<std::byte> dst(bytes);
  double best = 0;
  for (int i = 0; i < 3; ++i) {  // the best of three: the first pays page faults
    const auto t0 = Clock::now();
    copyBytes(dst.data(), dom.window(peer), bytes);  // as the staged steps copy
    const double took = secondsSince(t0);
    best = i == 0 ? took : std::min(best, took);
  }
  s.scaleUpBytesPerSec = bytes / std::max(best, 1e-9);
}

std::string encodeModel(const TierModel& m) {
  return hexDouble(m.scaleUp.bytesPerSec) + " " + hexDouble(m.scaleUp.latencySec) + " " +
         hexDouble(m.scaleOut.bytesPerSec) + " " + hexDouble(m.scaleOut.latencySec);
}

// What the probe measures, over `configured` (the figures it does not measure stay).
TierModel decodeModel(const std::string& text, const TierModel& configured) {
  auto f = parseFields(text, 4);
  if (!f[0] || !f[1] || !f[2] || !f[3]) fail(ErrorCode::InvalidArgument, "tier probe: malformed model '", text, "'");
  TierModel m = configured;
  m.scaleUp = {*f[0], *f[1]};
  m.scaleOut = {*f[2], *f[3]};
  m.transportInside = m.scaleOut;  // as tierModelFromParams: the runtime's transport inside a domain
  return m;
}

}  // namespace

std::string ProbeSample::encode() const {
  return field(scaleOutLatencySec) + " " + field(scaleOutBytesPerSec) + " " + field(scaleUpBytesPerSec);
}

ProbeSample ProbeSample::decode(const std::string& text) {
  auto f = parseFields(text, 3);
  return ProbeSample{f[0], f[1], f[2]};
}

TierModel agreeOnProbes(const TierModel& configured, const std::vector<ProbeSample>& samples) {
  auto agree = [&](std::optional<double> ProbeSample::*member, double fallback) {
    std::vector<double> seen;
    for (const ProbeSample& s : samples)
      if (s.*member) seen.push_back(*(s.*member));
    return seen.empty() ? fallback : median(seen);
  };
  TierModel m = configured;
  m.scaleOut.latencySec = agree(&ProbeSample::scaleOutLatencySec, configured.scaleOut.latencySec);
  m.scaleOut.bytesPerSec = agree(&ProbeSample::scaleOutBytesPerSec, configured.scaleOut.bytesPerSec);
  m.scaleUp.bytesPerSec = agree(&ProbeSample::scaleUpBytesPerSec, configured.scaleUp.bytesPerSec);
  m.transportInside = m.scaleOut;
  return m;
}

ProbeSample probeTiers(const Topology& topo, Domain& domain, Transport* transport, bool scaleOutPaced,
                       bool scaleUpPaced, Deadline deadline) {
  ProbeSample s;
  if (!scaleUpPaced) probeScaleUp(domain, s);
  // Ranks beyond the smallest domain's size have no rail peer in every domain: they only listen.
  if (transport && !scaleOutPaced && topo.numDomains() > 1 && topo.localRank() < topo.minDomainSize())
    probeScaleOut(topo, *transport, s, deadline);
  return s;
}

TierModel shareProbes(Store& store, const Topology& topo, const ProbeSample& mine, const TierModel& configured,
                      Deadline deadline) {
  store.setString("probe/" + std::to_string(topo.rank()), mine.encode());
  if (topo.rank() == 0) {
    std::vector<ProbeSample> all;
    for (int r = 0; r < topo.size(); ++r)
      all.push_back(ProbeSample::decode(store.getString("probe/" + std::to_string(r), deadline)));
    store.setString("probe/agreed", encodeModel(agreeOnProbes(configured, all)));
  }
  const TierModel agreed = decodeModel(store.getString("probe/agreed", deadline), configured);
  TIERCC_LOG(Info, Tune) << "tier probe (median of " << topo.size() << " ranks): scale-up "
                         << agreed.scaleUp.describe() << "; scale-out " << agreed.scaleOut.describe();
  return agreed;
}

}  // namespace tiercc
