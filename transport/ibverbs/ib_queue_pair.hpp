// Reliable-connected queue pairs: creation, the address a peer needs to connect to one, and the
// INIT -> RTR -> RTS transitions with the retry settings that turn a dead peer into a completion
// error in bounded time (timeout 2^n * 4.096 us, retry_cnt tries) instead of a silent hang.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <memory>
#include <string>

#include "transport/ibverbs/ib_device.hpp"

namespace tiercc::ib {

struct CqDeleter {
  void operator()(ibv_cq* c) const { if (c) ibv_destroy_cq(c); }
};
struct QpDeleter {
  void operator()(ibv_qp* q) const { if (q) ibv_destroy_qp(q); }
};
struct MrDeleter {
  void operator()(ibv_mr* m) const { if (m) ibv_dereg_mr(m); }
};
struct ChannelDeleter {
  void operator()(ibv_comp_channel* c) const { if (c) ibv_destroy_comp_channel(c); }
};
using CqPtr = std::unique_ptr<ibv_cq, CqDeleter>;
using QpPtr = std::unique_ptr<ibv_qp, QpDeleter>;
using MrPtr = std::unique_ptr<ibv_mr, MrDeleter>;
using ChannelPtr = std::unique_ptr<ibv_comp_channel, ChannelDeleter>;

/// What a peer needs to connect its queue pair to ours; travels through the Store as bytes.
struct QpAddress {
  std::uint32_t qpn = 0;
  std::uint32_t psn = 0;
  std::uint16_t lid = 0;
  std::uint8_t mtu = 0;  ///< ibv_mtu of the port
  std::uint8_t linkLayerIb = 0;
  std::uint8_t gid[16] = {};
};

struct QpTuning {
  std::uint8_t timeout = 14;
  std::uint8_t retryCnt = 7;
  std::uint8_t rnrRetry = 7;
};

/// The retry settings from TIERCC_IB_TIMEOUT / TIERCC_IB_RETRY_CNT (range-checked).
QpTuning tuningFromParams();

/// Creates an RC QP; asks for `wantInline` bytes of inline data and settles for what the device
/// grants (reported in `gotInline`).
QpPtr createRcQp(ibv_pd* pd, ibv_cq* cq, std::uint32_t sendDepth, std::uint32_t recvDepth,
                 std::uint32_t wantInline, std::uint32_t& gotInline);

/// Our side of `qp` as a peer sees it.
QpAddress localAddress(ibv_qp* qp, const DeviceChoice& choice, std::uint32_t psn);

/// Moves `qp` through INIT, RTR and RTS towards `remote`; `localPsn` is the psn we published.
/// Throws TransportError naming `peer`.
void connectRcQp(ibv_qp* qp, const DeviceChoice& choice, std::uint32_t localPsn, const QpAddress& remote,
                 const QpTuning& tuning, const std::string& peer);

/// Moves `qp` to the error state: outstanding work requests complete with a flush status.
void moveToError(ibv_qp* qp);

}  // namespace tiercc::ib
