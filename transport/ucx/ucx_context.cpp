// The shared ucp context (see ucx_context.hpp) and the availability probe used by the factory.
#include "transport/ucx/ucx_context.hpp"

#include <cstdlib>

#include "core/errors.hpp"

namespace tiercc::ucxnet {

namespace {

// UCX notices a peer that died silently (shared-memory transports) only by keepalive, every
// 20 s by default: too slow for TIERCC_TIMEOUT-bounded failure reports. The user's value wins.
constexpr const char* kKeepaliveInterval = "1s";

// UCX has two shared-memory transports of one kind, posix and sysv, and every worker opens both,
// each allocating and touching its receive pool at once; a lane uses one. Without sysv a 256-rank
// job on 2 cores started 4 s sooner (docs/design.md). The user's UCX_TLS wins.
constexpr const char* kTransports = "^sysv";

// UCX's tcp transport (1.13 to at least 1.18) completes a zero-copy send twice when the socket
// fails under it: uct_tcp_ep_sendv's error path purges the endpoint, which invokes the send's
// completion, then invokes it again; with UCX's assertions on (Debian's build) the survivor of a
// peer killed mid-transfer aborts in uct_invoke_completion instead of reporting the peer. It
// happened about once in a hundred runs of PeerKilledMidTransfer/ucx on 2 loaded cores. An
// iovec budget of 0 turns off tcp's am and put zcopy (uct_tcp_iface_query), so tcp sends copy
// through its segments, whose error path has no completion to invoke. The user's
// UCX_TCP_MAX_IOV wins.
constexpr const char* kTcpMaxIov = "0";

ucp_context_h initContext(std::string& why) {
  ucp_config_t* config = nullptr;
  ucs_status_t status = ucp_config_read(nullptr, nullptr, &config);
  if (status != UCS_OK) {
    why = "ucp_config_read: " + statusText(status);
    return nullptr;
  }
  if (!std::getenv("UCX_KEEPALIVE_INTERVAL")) ucp_config_modify(config, "KEEPALIVE_INTERVAL", kKeepaliveInterval);
  // UCT keys go unprefixed: "MAX_IOV" names tcp's field; cma's is under SCOPY_ and stays.
  if (!std::getenv("UCX_TCP_MAX_IOV")) ucp_config_modify(config, "MAX_IOV", kTcpMaxIov);
  ucp_config_modify(config, "TLS", transportSelection().c_str());
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED;
  params.features = UCP_FEATURE_TAG | UCP_FEATURE_RMA | UCP_FEATURE_WAKEUP;
  params.mt_workers_shared = 1;  // regions are (un)mapped from whichever thread drops them
  ucp_context_h context = nullptr;
  status = ucp_init(&params, config, &context);
  ucp_config_release(config);
  if (status != UCS_OK) {
    why = "ucp_init: " + statusText(status);
    return nullptr;
  }
  return context;
}

}  // namespace

std::string transportSelection() {
  const char* asked = std::getenv("UCX_TLS");
  return asked && *asked ? asked : kTransports;
}

std::string statusText(ucs_status_t status) {
  return concat(ucs_status_string(status), " (", static_cast<int>(status), ")");
}

UcxContext::UcxContext() {
  std::string why;
  context_ = initContext(why);
  if (!context_) fail(ErrorCode::TransportError, "ucx transport: ", why);
}

UcxContext::~UcxContext() { ucp_cleanup(context_); }

std::optional<std::string> ucxUnavailable() {
  static const std::optional<std::string> kWhy = []() -> std::optional<std::string> {
    std::string why;
    ucp_context_h context = initContext(why);
    if (!context) return why;
    ucp_cleanup(context);
    return std::nullopt;
  }();
  return kWhy;
}

}  // namespace tiercc::ucxnet
