// Choosing the RDMA device, port and GID the ibverbs transport runs on, and the RAII owners of
// the verbs objects every connection shares (context, protection domain). The choice prefers
// the RoCE v2 GID of an IPv4 address (what routes over an IP fabric) and is checked at init by
// a loopback RDMA write, so a bad choice fails early with a message that says what to set.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace tiercc::ib {

/// Where this rank's queue pairs live: device, port, GID and what the port can do.
struct DeviceChoice {
  std::string device;
  int port = 1;
  int gidIndex = -1;            ///< -1: InfiniBand link layer without GRH (LID routing)
  ibv_gid gid{};
  std::uint32_t gidType = 0;    ///< IBV_GID_TYPE_*
  std::uint16_t lid = 0;
  ibv_mtu mtu = IBV_MTU_1024;   ///< the port's active MTU
  std::uint32_t maxMsgSize = 1u << 30;
  bool linkLayerIb = false;
  /// "rxe0 port 1 GID index 1 (RoCE v2 ::ffff:192.0.2.1)"
  std::string describe() const;
};

struct ContextDeleter {
  void operator()(ibv_context* c) const { if (c) ibv_close_device(c); }
};
struct PdDeleter {
  void operator()(ibv_pd* p) const { if (p) ibv_dealloc_pd(p); }
};
using ContextPtr = std::unique_ptr<ibv_context, ContextDeleter>;
using PdPtr = std::unique_ptr<ibv_pd, PdDeleter>;

/// Why no RDMA device/port is usable here, or nullopt. Cheap: lists devices and queries ports,
/// sends nothing.
std::optional<std::string> whyUnavailable();

/// Opens the device chosen by TIERCC_IB_DEVICE / TIERCC_IB_PORT / TIERCC_IB_GID_INDEX (or the
/// best one found) and fills `choice`; a list in TIERCC_IB_DEVICE gives local rank r its entry r
/// (one NIC per rail). Throws TransportError saying what was wrong.
ContextPtr openChosenDevice(DeviceChoice& choice, int localRank);

/// Connects two queue pairs of this process to each other and does one small RDMA write;
/// throws TransportError naming the device, port and GID, and the variables to set, if it fails.
/// Each choice is probed once per process.
void probeLoopback(ibv_context* ctx, ibv_pd* pd, const DeviceChoice& choice);

/// True for SoftRoCE (rdma_rxe), which retries forever when retry_cnt is 7 (the IBA says 7 tries).
bool isSoftRoce(ibv_context* ctx);

/// "::ffff:192.0.2.1" or the hex GID.
std::string gidToString(const ibv_gid& gid);

}  // namespace tiercc::ib
