// tiercc-info: RDMA devices seen through libibverbs (rdma-core), with every GID and its type,
// since picking the wrong RoCE GID is the field's classic failure.
#include <arpa/inet.h>

#include <cstdio>

#include "tools/info/probes.hpp"

#ifdef TIERCC_HAVE_VERBS
#include <infiniband/verbs.h>
#endif

namespace tiercc::info {

#ifdef TIERCC_HAVE_VERBS
namespace {

const char* portState(ibv_port_state s) { return ibv_port_state_str(s); }

const char* gidType(unsigned type) {
  switch (type) {
    case IBV_GID_TYPE_IB: return "IB";
    case IBV_GID_TYPE_ROCE_V1: return "RoCE v1";
    case IBV_GID_TYPE_ROCE_V2: return "RoCE v2";
  }
  return "?";
}

void printPort(std::ostream& out, ibv_context* ctx, uint8_t port) {
  ibv_port_attr attr{};
  if (ibv_query_port(ctx, port, &attr) != 0) {
    out << "    port " << int(port) << ": ibv_query_port failed\n";
    return;
  }
  out << "    port " << int(port) << ": " << portState(attr.state) << ", active MTU "
      << (128 << attr.active_mtu) << ", link layer "
      << (attr.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet (RoCE)" : "InfiniBand") << "\n";
  for (int i = 0; i < attr.gid_tbl_len; ++i) {
    ibv_gid_entry entry{};
    if (ibv_query_gid_ex(ctx, port, static_cast<uint32_t>(i), &entry, 0) != 0) continue;
    char text[INET6_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET6, entry.gid.raw, text, sizeof(text));
    out << "      GID[" << i << "] " << text << "  " << gidType(entry.gid_type) << "\n";
  }
}

}  // namespace

void printVerbsDevices(std::ostream& out) {
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (!list || n == 0) {
    out << "  ibverbs: no RDMA devices (ibv_get_device_list found " << n
        << "; this kernel may lack RDMA modules: see tests/softroce for SoftRoCE in a VM)\n";
    if (list) ibv_free_device_list(list);
    return;
  }
  for (int d = 0; d < n; ++d) {
    out << "  ibverbs device " << ibv_get_device_name(list[d]) << "\n";
    ibv_context* ctx = ibv_open_device(list[d]);
    if (!ctx) {
      out << "    cannot open device\n";
      continue;
    }
    ibv_device_attr attr{};
    if (ibv_query_device(ctx, &attr) == 0)
      for (uint8_t p = 1; p <= attr.phys_port_cnt; ++p) printPort(out, ctx, p);
    ibv_close_device(ctx);
  }
  ibv_free_device_list(list);
}
#else
void printVerbsDevices(std::ostream& out) {
  out << "  ibverbs: not built (configure found no libibverbs; apt-get install libibverbs-dev)\n";
}
#endif

}  // namespace tiercc::info
