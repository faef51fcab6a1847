// RC queue pair creation and connection (see ib_queue_pair.hpp).
#include "transport/ibverbs/ib_queue_pair.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/errors.hpp"
#include "core/params.hpp"

namespace tiercc::ib {

QpTuning tuningFromParams() {
  QpTuning t;
  std::int64_t timeout = params::getInt("TIERCC_IB_TIMEOUT");
  std::int64_t retry = params::getInt("TIERCC_IB_RETRY_CNT");
  TIERCC_REQUIRE_ARG(timeout >= 1 && timeout <= 31, "TIERCC_IB_TIMEOUT must be 1..31, got ", timeout);
  TIERCC_REQUIRE_ARG(retry >= 0 && retry <= 7, "TIERCC_IB_RETRY_CNT must be 0..7, got ", retry);
  t.timeout = static_cast<std::uint8_t>(timeout);
  t.retryCnt = static_cast<std::uint8_t>(retry);
  return t;
}

QpPtr createRcQp(ibv_pd* pd, ibv_cq* cq, std::uint32_t sendDepth, std::uint32_t recvDepth,
                 std::uint32_t wantInline, std::uint32_t& gotInline) {
  ibv_qp_init_attr attr{};
  attr.send_cq = cq;
  attr.recv_cq = cq;
  attr.qp_type = IBV_QPT_RC;
  attr.cap.max_send_wr = sendDepth;
  attr.cap.max_recv_wr = recvDepth;
  attr.cap.max_send_sge = 1;
  attr.cap.max_recv_sge = 1;
  // Devices differ in how much inline data they take; halve the request until one accepts.
  for (std::uint32_t inl = wantInline;; inl /= 2) {
    attr.cap.max_inline_data = inl;
    ibv_qp* qp = ibv_create_qp(pd, &attr);
    if (qp) {
      gotInline = attr.cap.max_inline_data;
      return QpPtr(qp);
    }
    if (inl == 0) failErrno("ibv_create_qp (RC, " + std::to_string(sendDepth) + " send / " +
                            std::to_string(recvDepth) + " receive work requests)");
  }
}

QpAddress localAddress(ibv_qp* qp, const DeviceChoice& choice, std::uint32_t psn) {
  QpAddress a;
  a.qpn = qp->qp_num;
  a.psn = psn & 0xffffff;
  a.lid = choice.lid;
  a.mtu = static_cast<std::uint8_t>(choice.mtu);
  a.linkLayerIb = choice.linkLayerIb ? 1 : 0;
  std::memcpy(a.gid, choice.gid.raw, 16);
  return a;
}

static void modify(ibv_qp* qp, ibv_qp_attr& attr, int mask, const char* state, const std::string& peer) {
  int rc = ibv_modify_qp(qp, &attr, mask);
  if (rc != 0)
    fail(ErrorCode::TransportError, "ibverbs: cannot move the queue pair to ", peer, " to ", state, ": ",
         std::strerror(rc > 0 ? rc : errno));
}

void connectRcQp(ibv_qp* qp, const DeviceChoice& choice, std::uint32_t localPsn, const QpAddress& remote,
                 const QpTuning& tuning, const std::string& peer) {
  if (remote.linkLayerIb != (choice.linkLayerIb ? 1 : 0))
    fail(ErrorCode::TransportError, "ibverbs: ", peer, " is on a ", remote.linkLayerIb ? "InfiniBand" : "Ethernet",
         " port but this rank uses ", choice.describe(),
         "; give every rank a device and port of the same link layer (TIERCC_IB_DEVICE, TIERCC_IB_PORT)");
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_INIT;
  attr.pkey_index = 0;
  attr.port_num = static_cast<std::uint8_t>(choice.port);
  attr.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  modify(qp, attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, "INIT", peer);

  attr = {};
  attr.qp_state = IBV_QPS_RTR;
  // The path MTU is the smaller of the two ports' (an Ethernet MTU mismatch would drop packets).
  attr.path_mtu = static_cast<ibv_mtu>(std::min<int>(choice.mtu, remote.mtu));
  attr.dest_qp_num = remote.qpn;
  attr.rq_psn = remote.psn;
  attr.max_dest_rd_atomic = 1;
  attr.min_rnr_timer = 12;
  attr.ah_attr.port_num = static_cast<std::uint8_t>(choice.port);
  attr.ah_attr.dlid = remote.lid;
  if (choice.gidIndex >= 0) {
    attr.ah_attr.is_global = 1;
    std::memcpy(attr.ah_attr.grh.dgid.raw, remote.gid, 16);
    attr.ah_attr.grh.sgid_index = static_cast<std::uint8_t>(choice.gidIndex);
    attr.ah_attr.grh.hop_limit = 64;
  }
  modify(qp, attr,
         IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
             IBV_QP_MIN_RNR_TIMER,
         "RTR", peer);

  attr = {};
  attr.qp_state = IBV_QPS_RTS;
  attr.timeout = tuning.timeout;
  attr.retry_cnt = tuning.retryCnt;
  attr.rnr_retry = tuning.rnrRetry;
  attr.sq_psn = localPsn & 0xffffff;  // the psn we published as our side's
  attr.max_rd_atomic = 1;
  modify(qp, attr,
         IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC,
         "RTS", peer);
}

void moveToError(ibv_qp* qp) {
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_ERR;
  ibv_modify_qp(qp, &attr, IBV_QP_STATE);
}

}  // namespace tiercc::ib
