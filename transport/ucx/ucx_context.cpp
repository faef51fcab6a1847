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

ucp_context_h initContext(std::string& why) {
  ucp_config_t* config = nullptr;
  ucs_status_t status = ucp_config_read(nullptr, nullptr, &config);
  if (status != UCS_OK) {
    why = "ucp_config_read: " + statusText(status);
    return nullptr;
  }
  if (!std::getenv("UCX_KEEPALIVE_INTERVAL")) ucp_config_modify(config, "KEEPALIVE_INTERVAL", kKeepaliveInterval);
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
