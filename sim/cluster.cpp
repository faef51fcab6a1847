// Cluster figures and presets (see cluster.hpp; sources in docs/simulator.md).
#include "sim/cluster.hpp"

#include <sstream>

#include "core/errors.hpp"
#include "core/units.hpp"

namespace tiercc::sim {
namespace {

// Latencies per step (a synchronised round of messages), not per wire hop: a scale-up round is a
// write plus a flag through one switch (~1 us, NCCL's NVLink figures are 0.5-1 us); a
// scale-out round is an RDMA write with immediate plus the proxy's completion handling (~5 us;
// NCCL's network figures are several us per step). Estimates, not measurements.
constexpr double kNvlinkLatency = 1e-6;
constexpr double kRdmaLatency = 5e-6;

Cluster make(const char* name, int domain, int domains, double upGBps, double outGBps) {
  Cluster c;
  c.name = name;
  c.domainSize = domain;
  c.gpus = domain * domains;
  c.scaleUp = {upGBps * 1e9, kNvlinkLatency};
  c.scaleOut = {outGBps * 1e9, kRdmaLatency};
  return c;
}

}  // namespace

Shape Cluster::shape() const {
  Shape s;
  s.domainOf.reserve(static_cast<std::size_t>(gpus));
  for (int r = 0; r < gpus; ++r) s.domainOf.push_back(r / domainSize);
  for (int d = 0; d < numDomains(); ++d) s.domainSizes.push_back(std::min(domainSize, gpus - d * domainSize));
  return s;
}

TierModel Cluster::tierModel() const {
  TierModel m;
  m.scaleUp = scaleUp;
  m.scaleOut = scaleOut;
  m.transportInside = flatInsideOnScaleUp ? scaleUp : scaleOut;
  m.fabricBytesPerSec = fabricBytesPerSec();
  return m;
}

std::string Cluster::describe() const {
  std::ostringstream out;
  out << "cluster " << name << ": " << gpus << " GPUs in " << numDomains()
      << (numDomains() == 1 ? " domain of " : " domains of ") << domainSize << "\n"
      << "  scale-up per GPU and direction:  " << units::formatBandwidth(scaleUp.bytesPerSec) << ", "
      << units::formatLatency(scaleUp.latencySec) << " per step\n"
      << "  scale-out per GPU and direction: " << units::formatBandwidth(scaleOut.bytesPerSec) << ", "
      << units::formatLatency(scaleOut.latencySec) << " per step";
  if (oversub > 1) out << ", fabric oversubscribed " << oversub << ":1";
  out << "\n  a domain: " << units::formatBandwidth(domainSize * scaleUp.bytesPerSec) << " inside, "
      << units::formatBandwidth(domainSize * scaleOut.bytesPerSec) << " out ("
      << scaleUp.bytesPerSec / scaleOut.bytesPerSec << ":1)";
  if (!flatInsideOnScaleUp)
    out << "\n  flat algorithms' messages inside a domain take the transport (tiercc's runtime)";
  return out.str();
}

const std::vector<Preset>& presets() {
  static const std::vector<Preset> kPresets = {
      {"h100-8x400g", "DGX H100: NVLink 4, 900 GB/s per GPU counting both directions; 8 x ConnectX-7 400G",
       make("h100-8x400g", 8, 128, 450, 50)},
      {"gb200-nvl72-cx7", "GB200 NVL72: NVLink 5, 1.8 TB/s per GPU both directions; ConnectX-7 400G per GPU",
       make("gb200-nvl72-cx7", 72, 8, 900, 50)},
      {"gb300-nvl72-cx8", "GB300 NVL72: NVLink 5, 1.8 TB/s per GPU both directions; ConnectX-8 800G per GPU",
       make("gb300-nvl72-cx8", 72, 8, 900, 100)},
      {"rubin-nvl72", "Vera Rubin NVL72: NVLink 6, 3.6 TB/s per GPU both directions; 2 x 800G (ConnectX-9) per GPU",
       make("rubin-nvl72", 72, 8, 1800, 200)},
  };
  return kPresets;
}

Cluster presetCluster(const std::string& name) {
  std::string list;
  for (const Preset& p : presets()) {
    if (p.name == name) return p.cluster;
    list += (list.empty() ? "" : ", ") + p.name;
  }
  fail(ErrorCode::InvalidArgument, "--preset ", name, ": no such preset (presets: ", list, ")");
}

}  // namespace tiercc::sim
