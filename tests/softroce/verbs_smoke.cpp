// softroce_verbs_smoke: the first real RDMA check of the SoftRoCE VM, independent of tiercc's code.
// Opens the RDMA device (rxe0), connects two RC queue pairs inside one process and moves data with
// RDMA WRITE WITH IMM, checking the bytes, the immediate and both completions. Exit 0 = all passed.
#include <arpa/inet.h>
#include <infiniband/verbs.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

constexpr std::uint8_t kPort = 1;
constexpr std::size_t kMaxBytes = std::size_t(1) << 20;
constexpr auto kCompletionTimeout = std::chrono::seconds(10);

int passed = 0, failed = 0;

bool check(bool ok, const std::string& what) {
  if (ok) {
    ++passed;
    std::printf("ok   %s\n", what.c_str());
  } else {
    ++failed;
    std::printf("FAIL %s (errno %d: %s)\n", what.c_str(), errno, std::strerror(errno));
  }
  std::fflush(stdout);
  return ok;
}

// unique_ptr deleters for verbs objects; members are declared so that they are destroyed in the
// reverse order of creation (QPs before CQs before MRs before the PD before the context).
template <auto Destroy>
struct Release {
  template <typename T>
  void operator()(T* object) const {
    Destroy(object);
  }
};
using DeviceList = std::unique_ptr<ibv_device*, Release<ibv_free_device_list>>;
using Context = std::unique_ptr<ibv_context, Release<ibv_close_device>>;
using ProtectionDomain = std::unique_ptr<ibv_pd, Release<ibv_dealloc_pd>>;
using MemoryRegion = std::unique_ptr<ibv_mr, Release<ibv_dereg_mr>>;
using CompletionQueue = std::unique_ptr<ibv_cq, Release<ibv_destroy_cq>>;
using QueuePair = std::unique_ptr<ibv_qp, Release<ibv_destroy_qp>>;

// One side of the connection: a registered buffer, its own CQ and an RC QP.
struct Endpoint {
  std::vector<unsigned char> buffer = std::vector<unsigned char>(kMaxBytes + 1);  // +1: overrun guard
  MemoryRegion mr;
  CompletionQueue cq;
  QueuePair qp;
};

bool isRoceV2Ipv4(const ibv_gid_entry& entry) {
  static constexpr unsigned char kV4MappedPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return entry.gid_type == IBV_GID_TYPE_ROCE_V2 && std::memcmp(entry.gid.raw, kV4MappedPrefix, 12) == 0;
}

// The GID to address a RoCE peer by: RoCE v2 over IPv4 (routable, what the VM's rxe0 has at index 1).
int findGidIndex(ibv_context* context, int tableLength) {
  std::vector<ibv_gid_entry> entries(static_cast<std::size_t>(tableLength));
  ssize_t n = ibv_query_gid_table(context, entries.data(), entries.size(), 0);
  for (ssize_t i = 0; i < n; ++i)
    if (entries[i].port_num == kPort && isRoceV2Ipv4(entries[i])) return static_cast<int>(entries[i].gid_index);
  return -1;
}

bool createEndpoint(ibv_context* context, ibv_pd* pd, Endpoint& ep) {
  ep.mr.reset(ibv_reg_mr(pd, ep.buffer.data(), ep.buffer.size(), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE));
  ep.cq.reset(ibv_create_cq(context, 16, nullptr, nullptr, 0));
  if (!ep.mr || !ep.cq) return false;
  ibv_qp_init_attr init{};
  init.qp_type = IBV_QPT_RC;
  init.send_cq = init.recv_cq = ep.cq.get();
  init.cap.max_send_wr = init.cap.max_recv_wr = 4;
  init.cap.max_send_sge = init.cap.max_recv_sge = 1;
  ep.qp.reset(ibv_create_qp(pd, &init));
  return ep.qp != nullptr;
}

// RESET -> INIT -> RTR -> RTS, addressing the peer QP by GID (RoCE needs a GRH).
bool connect(ibv_qp* qp, std::uint32_t peerQpn, const ibv_gid& peerGid, int gidIndex, ibv_mtu mtu) {
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_INIT;
  attr.port_num = kPort;
  attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
  if (ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) return false;

  attr = {};
  attr.qp_state = IBV_QPS_RTR;
  attr.path_mtu = mtu;
  attr.dest_qp_num = peerQpn;
  attr.max_dest_rd_atomic = 1;
  attr.min_rnr_timer = 12;
  attr.ah_attr.is_global = 1;
  attr.ah_attr.grh.dgid = peerGid;
  attr.ah_attr.grh.sgid_index = static_cast<std::uint8_t>(gidIndex);
  attr.ah_attr.grh.hop_limit = 1;
  attr.ah_attr.port_num = kPort;
  if (ibv_modify_qp(qp, &attr,
                    IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                        IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
    return false;

  attr = {};
  attr.qp_state = IBV_QPS_RTS;
  attr.timeout = 14;
  attr.retry_cnt = 7;
  attr.rnr_retry = 7;
  attr.max_rd_atomic = 1;
  return ibv_modify_qp(qp, &attr,
                       IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                           IBV_QP_MAX_QP_RD_ATOMIC) == 0;
}

// Waits, bounded in time, for one completion and returns it (status IBV_WC_GENERAL_ERR on timeout).
ibv_wc pollOne(ibv_cq* cq) {
  ibv_wc wc{};
  auto deadline = std::chrono::steady_clock::now() + kCompletionTimeout;
  while (std::chrono::steady_clock::now() < deadline) {
    int n = ibv_poll_cq(cq, 1, &wc);
    if (n == 1) return wc;
    if (n < 0) break;
  }
  std::printf("     no completion within %lld s\n", static_cast<long long>(kCompletionTimeout.count()));
  wc = {};
  wc.status = IBV_WC_GENERAL_ERR;
  return wc;
}

// One RDMA WRITE WITH IMM of `bytes` from a into b: the receiver sees a RECV_RDMA_WITH_IMM
// completion carrying the immediate and the length, and exactly those bytes changed.
void writeWithImm(Endpoint& a, Endpoint& b, std::size_t bytes) {
  const std::string what = "RDMA WRITE WITH IMM " + std::to_string(bytes) + " B";
  const std::uint32_t imm = 0x7c000000u | static_cast<std::uint32_t>(bytes);
  for (std::size_t i = 0; i < bytes; ++i) a.buffer[i] = static_cast<unsigned char>(i * 131 + bytes);
  std::fill(b.buffer.begin(), b.buffer.end(), 0);

  ibv_recv_wr recv{}, *badRecv = nullptr;  // no scatter list: the data goes where the writer says
  recv.wr_id = bytes;
  ibv_sge sge{reinterpret_cast<std::uintptr_t>(a.buffer.data()), static_cast<std::uint32_t>(bytes), a.mr->lkey};
  ibv_send_wr send{}, *badSend = nullptr;
  send.wr_id = bytes;
  send.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
  send.sg_list = bytes ? &sge : nullptr;
  send.num_sge = bytes ? 1 : 0;
  send.send_flags = IBV_SEND_SIGNALED;
  send.imm_data = htonl(imm);
  send.wr.rdma.remote_addr = reinterpret_cast<std::uintptr_t>(b.buffer.data());
  send.wr.rdma.rkey = b.mr->rkey;
  if (!check(ibv_post_recv(b.qp.get(), &recv, &badRecv) == 0 && ibv_post_send(a.qp.get(), &send, &badSend) == 0,
             what + ": post"))
    return;

  ibv_wc sent = pollOne(a.cq.get());
  check(sent.status == IBV_WC_SUCCESS && sent.opcode == IBV_WC_RDMA_WRITE && sent.wr_id == bytes,
        what + ": sender completion (" + ibv_wc_status_str(sent.status) + ")");
  ibv_wc got = pollOne(b.cq.get());
  check(got.status == IBV_WC_SUCCESS && got.opcode == IBV_WC_RECV_RDMA_WITH_IMM && (got.wc_flags & IBV_WC_WITH_IMM) &&
            ntohl(got.imm_data) == imm && got.byte_len == bytes,
        what + ": receiver completion with immediate and length (" + ibv_wc_status_str(got.status) + ")");
  check(std::memcmp(a.buffer.data(), b.buffer.data(), bytes) == 0 && b.buffer[bytes] == 0,
        what + ": data arrived, nothing beyond it");
}

int run(const std::string& deviceName) {
  int count = 0;
  DeviceList devices(ibv_get_device_list(&count));
  ibv_device* device = nullptr;
  for (int i = 0; devices && i < count; ++i)
    if (deviceName == ibv_get_device_name(devices.get()[i])) device = devices.get()[i];
  if (!check(device != nullptr, "device " + deviceName + " found (" + std::to_string(count) + " RDMA devices)"))
    return 1;
  Context context(ibv_open_device(device));
  if (!check(context != nullptr, "ibv_open_device")) return 1;

  ibv_port_attr port{};
  if (!check(ibv_query_port(context.get(), kPort, &port) == 0 && port.state == IBV_PORT_ACTIVE, "port 1 ACTIVE"))
    return 1;
  check(port.link_layer == IBV_LINK_LAYER_ETHERNET, "link layer Ethernet (RoCE)");
  int gidIndex = findGidIndex(context.get(), port.gid_tbl_len);
  if (!check(gidIndex >= 0, "RoCE v2 IPv4 GID found at index " + std::to_string(gidIndex))) return 1;
  if (const char* expected = std::getenv("SOFTROCE_GID_INDEX"))
    check(std::atoi(expected) == gidIndex, std::string("same GID index as the VM's SOFTROCE_GID_INDEX=") + expected);
  ibv_gid gid{};
  check(ibv_query_gid(context.get(), kPort, gidIndex, &gid) == 0, "ibv_query_gid");

  ProtectionDomain pd(ibv_alloc_pd(context.get()));
  if (!check(pd != nullptr, "ibv_alloc_pd")) return 1;
  Endpoint a, b;  // declared after the PD, so destroyed before it
  if (!check(createEndpoint(context.get(), pd.get(), a) && createEndpoint(context.get(), pd.get(), b),
             "two RC QPs with their CQs and 1 MiB MRs"))
    return 1;
  if (!check(connect(a.qp.get(), b.qp->qp_num, gid, gidIndex, port.active_mtu) &&
                 connect(b.qp.get(), a.qp->qp_num, gid, gidIndex, port.active_mtu),
             "QPs connected to each other (INIT, RTR, RTS)"))
    return 1;

  for (std::size_t bytes : {std::size_t(0), std::size_t(1), std::size_t(4096), std::size_t(65537), kMaxBytes})
    writeWithImm(a, b, bytes);
  return failed == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const char* fromEnv = std::getenv("SOFTROCE_DEV");
  std::string deviceName = argc > 1 ? argv[1] : fromEnv ? fromEnv : "rxe0";
  int rc = run(deviceName);
  std::printf("%d passed, %d failed\n", passed, failed);
  return rc;
}
