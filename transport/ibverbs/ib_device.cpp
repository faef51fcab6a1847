// Device, port and GID selection and the loopback probe (see ib_device.hpp).
#include "transport/ibverbs/ib_device.hpp"

#include <arpa/inet.h>

#include <chrono>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "core/errors.hpp"
#include "core/log.hpp"
#include "core/params.hpp"
#include "transport/ibverbs/ib_queue_pair.hpp"
#include "transport/nic_choice.hpp"

namespace tiercc::ib {

namespace {

constexpr const char* kWhatToSet = "set TIERCC_IB_DEVICE, TIERCC_IB_PORT or TIERCC_IB_GID_INDEX to choose another, "
                                   "or TIERCC_TRANSPORT=tcp";

struct DeviceListDeleter {
  void operator()(ibv_device** l) const { if (l) ibv_free_device_list(l); }
};

bool isIpv4Mapped(const ibv_gid& gid) {
  static const std::uint8_t kPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return std::memcmp(gid.raw, kPrefix, 12) == 0;
}

bool isZero(const ibv_gid& gid) {
  for (std::uint8_t b : gid.raw)
    if (b) return false;
  return true;
}

const char* gidTypeName(std::uint32_t type) {
  switch (type) {
    case IBV_GID_TYPE_IB: return "IB";
    case IBV_GID_TYPE_ROCE_V1: return "RoCE v1";
    case IBV_GID_TYPE_ROCE_V2: return "RoCE v2";
    default: return "unknown type";
  }
}

// Higher is better: RoCE v2 over IPv4 routes on any IP fabric; v1 stays in one L2 segment.
int gidScore(const ibv_gid_entry& e) {
  if (isZero(e.gid)) return -1;
  if (e.gid_type == IBV_GID_TYPE_ROCE_V2) {
    if (isIpv4Mapped(e.gid)) return 40;
    bool linkLocal = e.gid.raw[0] == 0xfe && (e.gid.raw[1] & 0xc0) == 0x80;
    return linkLocal ? 20 : 30;
  }
  if (e.gid_type == IBV_GID_TYPE_ROCE_V1) return 10;
  return 5;
}

// The valid GID entries of `port`: the whole table in one call, else one query per index.
std::vector<ibv_gid_entry> gidEntries(ibv_context* ctx, int port, int tableLen) {
  std::vector<ibv_gid_entry> out;
  ibv_device_attr dev{};
  if (ibv_query_device(ctx, &dev) == 0) {
    std::vector<ibv_gid_entry> all(static_cast<std::size_t>(tableLen) * dev.phys_port_cnt + 1);
    ssize_t n = ibv_query_gid_table(ctx, all.data(), all.size(), 0);
    if (n >= 0) {
      for (ssize_t i = 0; i < n; ++i)
        if (static_cast<int>(all[static_cast<std::size_t>(i)].port_num) == port) out.push_back(all[static_cast<std::size_t>(i)]);
      return out;
    }
  }
  for (int i = 0; i < tableLen; ++i) {
    ibv_gid_entry e{};
    if (ibv_query_gid_ex(ctx, static_cast<std::uint32_t>(port), static_cast<std::uint32_t>(i), &e, 0) == 0)
      out.push_back(e);
  }
  return out;
}

std::optional<int> optionalInt(const char* name) {
  if (params::getString(name).empty()) return std::nullopt;
  return static_cast<int>(params::getInt(name));
}

const char* portStateName(ibv_port_state s) { return ibv_port_state_str(s); }

struct Candidate {
  int score = -1;
  DeviceChoice choice;
};

// The best usable (port, GID) of one open device, honouring the overrides; `notes` collects
// why ports were passed over, for the error message.
Candidate bestOnDevice(ibv_context* ctx, const std::string& name, std::optional<int> wantPort,
                       std::optional<int> wantGid, std::string& notes) {
  Candidate best;
  ibv_device_attr dev{};
  if (ibv_query_device(ctx, &dev) != 0) {
    notes += concat("; ", name, ": ibv_query_device failed");
    return best;
  }
  if (wantPort && (*wantPort < 1 || *wantPort > dev.phys_port_cnt))
    notes += concat("; ", name, " has no port ", *wantPort, " (TIERCC_IB_PORT; it has ", int(dev.phys_port_cnt), ")");
  for (int port = 1; port <= dev.phys_port_cnt; ++port) {
    if (wantPort && *wantPort != port) continue;
    ibv_port_attr pa{};
    if (ibv_query_port(ctx, static_cast<std::uint8_t>(port), &pa) != 0) continue;
    if (pa.state != IBV_PORT_ACTIVE) {
      notes += concat("; ", name, " port ", port, " is ", portStateName(pa.state));
      continue;
    }
    DeviceChoice c;
    c.device = name;
    c.port = port;
    c.lid = pa.lid;
    c.mtu = pa.active_mtu;
    c.maxMsgSize = pa.max_msg_sz ? pa.max_msg_sz : (1u << 30);
    c.linkLayerIb = pa.link_layer == IBV_LINK_LAYER_INFINIBAND;
    if (wantGid) {
      ibv_gid_entry e{};
      if (ibv_query_gid_ex(ctx, static_cast<std::uint32_t>(port), static_cast<std::uint32_t>(*wantGid), &e, 0) != 0) {
        notes += concat("; ", name, " port ", port, " has no valid GID at TIERCC_IB_GID_INDEX=", *wantGid);
        continue;
      }
      c.gidIndex = *wantGid;
      c.gid = e.gid;
      c.gidType = e.gid_type;
      if (best.score < 100) best = {100, c};
      continue;
    }
    if (c.linkLayerIb) {
      // InfiniBand inside one subnet routes by LID; no GRH needed.
      if (best.score < 50) best = {50, c};
      continue;
    }
    for (const ibv_gid_entry& e : gidEntries(ctx, port, pa.gid_tbl_len)) {
      int s = gidScore(e);
      if (s <= best.score) continue;
      c.gidIndex = static_cast<int>(e.gid_index);
      c.gid = e.gid;
      c.gidType = e.gid_type;
      best = {s, c};
    }
    if (best.score < 0) notes += concat("; ", name, " port ", port, " has no usable GID");
  }
  return best;
}

}  // namespace

std::string gidToString(const ibv_gid& gid) {
  char text[INET6_ADDRSTRLEN] = {};
  if (inet_ntop(AF_INET6, gid.raw, text, sizeof(text))) return text;
  return "?";
}

bool isSoftRoce(ibv_context* ctx) {
  constexpr std::uint32_t kRxeVendorId = 0xffffff;
  ibv_device_attr dev{};
  if (ibv_query_device(ctx, &dev) == 0 && dev.vendor_id == kRxeVendorId) return true;
  return std::string(ibv_get_device_name(ctx->device)).rfind("rxe", 0) == 0;
}

std::string DeviceChoice::describe() const {
  if (gidIndex < 0) return concat(device, " port ", port, " (InfiniBand, LID ", lid, ")");
  return concat(device, " port ", port, " GID index ", gidIndex, " (", gidTypeName(gidType), " ", gidToString(gid), ")");
}

ContextPtr openChosenDevice(DeviceChoice& choice, int localRank) {
  int count = 0;
  errno = 0;
  std::unique_ptr<ibv_device*, DeviceListDeleter> list(ibv_get_device_list(&count));
  if (!list)  // ENOSYS: the kernel has no RDMA support at all, the common case on plain hosts
    fail(ErrorCode::TransportError, "no RDMA device (ibv_get_device_list: ", std::strerror(errno),
         errno == ENOSYS ? "; this kernel has no RDMA support)" : "; is ib_uverbs loaded?)");
  if (count == 0) fail(ErrorCode::TransportError, "no RDMA device (ibv_get_device_list found 0)");
  const std::string wantDevice =
      entryForLocalRank(params::getString("TIERCC_IB_DEVICE"), localRank, "TIERCC_IB_DEVICE");
  std::optional<int> wantPort = optionalInt("TIERCC_IB_PORT");
  std::optional<int> wantGid = optionalInt("TIERCC_IB_GID_INDEX");
  std::string notes, seen;
  Candidate best;
  ContextPtr bestCtx;
  for (int i = 0; i < count; ++i) {
    std::string name = ibv_get_device_name(list.get()[i]);
    seen += (seen.empty() ? "" : ", ") + name;
    if (!wantDevice.empty() && name != wantDevice) continue;
    ContextPtr ctx(ibv_open_device(list.get()[i]));
    if (!ctx) {
      notes += concat("; ", name, ": ibv_open_device failed: ", std::strerror(errno));
      continue;
    }
    Candidate c = bestOnDevice(ctx.get(), name, wantPort, wantGid, notes);
    if (c.score > best.score) {
      best = c;
      bestCtx = std::move(ctx);
    }
  }
  if (!wantDevice.empty() && (", " + seen + ", ").find(", " + wantDevice + ", ") == std::string::npos)
    fail(ErrorCode::TransportError, "TIERCC_IB_DEVICE=", wantDevice, " is not an RDMA device here (found: ", seen, ")");
  if (!bestCtx)
    fail(ErrorCode::TransportError, "no usable RDMA port (devices: ", seen, notes, ")");
  choice = best.choice;
  return bestCtx;
}

std::optional<std::string> whyUnavailable() {
  try {
    DeviceChoice c;
    openChosenDevice(c, 0);
    return std::nullopt;
  } catch (const Error& e) {
    return std::string(e.what());
  }
}

namespace {

// Polls `cq` for one completion, sleeping between tries: this runs once, at init.
bool pollOnce(ibv_cq* cq, ibv_wc& wc, std::chrono::milliseconds limit) {
  auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    int n = ibv_poll_cq(cq, 1, &wc);
    if (n > 0) return true;
    if (n < 0) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return false;
}

void runProbe(ibv_context* ctx, ibv_pd* pd, const DeviceChoice& choice) {
  CqPtr cq(ibv_create_cq(ctx, 8, nullptr, nullptr, 0));
  if (!cq) failErrno("ibv_create_cq");
  std::uint32_t inl = 0;
  QpPtr a = createRcQp(pd, cq.get(), 4, 4, 0, inl);
  QpPtr b = createRcQp(pd, cq.get(), 4, 4, 0, inl);
  QpTuning tuning;
  tuning.retryCnt = 3;
  connectRcQp(a.get(), choice, 1, localAddress(b.get(), choice, 2), tuning, "itself (loopback probe)");
  connectRcQp(b.get(), choice, 2, localAddress(a.get(), choice, 1), tuning, "itself (loopback probe)");
  std::uint64_t words[2] = {0x7469657263637072ull, 0};
  MrPtr mr(ibv_reg_mr(pd, words, sizeof(words), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE));
  if (!mr) failErrno("ibv_reg_mr (loopback probe)");
  ibv_sge sge{reinterpret_cast<std::uintptr_t>(&words[0]), 8, mr->lkey};
  ibv_send_wr wr{};
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = reinterpret_cast<std::uintptr_t>(&words[1]);
  wr.wr.rdma.rkey = mr->rkey;
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(a.get(), &wr, &bad)) fail(ErrorCode::TransportError, "ibv_post_send: ", std::strerror(rc));
  ibv_wc wc{};
  if (!pollOnce(cq.get(), wc, std::chrono::seconds(10)))
    fail(ErrorCode::TransportError, "the RDMA write did not complete within 10 s");
  if (wc.status != IBV_WC_SUCCESS)
    fail(ErrorCode::TransportError, "the RDMA write failed: ", ibv_wc_status_str(wc.status));
  if (words[1] != words[0]) fail(ErrorCode::TransportError, "the RDMA write completed but the data did not arrive");
}

}  // namespace

void probeLoopback(ibv_context* ctx, ibv_pd* pd, const DeviceChoice& choice) {
  static std::mutex mutex;
  static std::set<std::string> probed;
  std::lock_guard<std::mutex> lock(mutex);
  std::string key = choice.describe();
  if (probed.count(key)) return;
  try {
    runProbe(ctx, pd, choice);
  } catch (const Error& e) {
    fail(ErrorCode::TransportError, "ibverbs: the loopback probe on ", key, " failed (", e.what(), "); ", kWhatToSet);
  }
  probed.insert(key);
  TIERCC_LOG(Info, Net) << "ibverbs: using " << key << ", MTU " << (128 << choice.mtu) << ", loopback probe ok";
}

}  // namespace tiercc::ib
