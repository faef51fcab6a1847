// The registry of scale-out backends compiled into this build (see factory.hpp). A backend
// that is compiled in may still be unable to run (no RDMA device): it says why.
#include "transport/factory.hpp"

#include <algorithm>

#include "core/errors.hpp"
#include "core/params.hpp"
#include "transport/tcp/tcp_transport.hpp"
#ifdef TIERCC_HAVE_UCX
#include "transport/ucx/ucx_transport.hpp"
#endif
#ifdef TIERCC_HAVE_VERBS
#include "transport/ibverbs/ib_transport.hpp"
#endif

namespace tiercc {

namespace {

struct Backend {
  const char* name;
  std::optional<std::string> (*unavailable)();
  /// Why the default choice passes over it although it runs; null: it never does.
  std::optional<std::string> (*passedOver)();
  std::unique_ptr<Transport> (*create)(Store&, const TransportSetup&);
};

std::optional<std::string> tcpUnavailable() { return std::nullopt; }

// In order of preference for the default choice.
const std::vector<Backend>& backends() {
  static const std::vector<Backend> kBackends = {
#ifdef TIERCC_HAVE_VERBS
      {"ibverbs", ibverbsUnavailable, nullptr, createIbverbsTransport},
#endif
#ifdef TIERCC_HAVE_UCX
      {"ucx", ucxTransportUnavailable, ucxTransportPassedOver, createUcxTransport},
#endif
      {"tcp", tcpUnavailable, nullptr, createTcpTransport},
  };
  return kBackends;
}

const Backend* find(const std::string& name) {
  for (const Backend& b : backends())
    if (name == b.name) return &b;
  return nullptr;
}

std::string known() {
  std::string out;
  for (const Backend& b : backends()) out += (out.empty() ? "" : ", ") + std::string(b.name);
  return out;
}

}  // namespace

std::vector<std::string> transportNames() {
  std::vector<std::string> out;
  for (const Backend& b : backends()) out.push_back(b.name);
  return out;
}

std::optional<std::string> transportUnavailable(const std::string& name) {
  const Backend* b = find(name);
  if (!b) return concat("unknown transport '", name, "' (this build has: ", known(), ")");
  return b->unavailable();
}

std::optional<std::string> transportPassedOver(const std::string& name) {
  const Backend* b = find(name);
  return b && b->passedOver ? b->passedOver() : std::nullopt;
}

std::string defaultTransportName() {
  std::string asked = params::getString("TIERCC_TRANSPORT");
  if (!asked.empty()) return asked;
  for (const Backend& b : backends())
    if (!(b.passedOver && b.passedOver()) && !b.unavailable()) return b.name;
  return "tcp";
}

std::unique_ptr<Transport> createTransport(const std::string& name, Store& store, const TransportSetup& setup) {
  const Backend* b = find(name);
  if (!b) fail(ErrorCode::InvalidArgument, "TIERCC_TRANSPORT: unknown transport '", name, "' (this build has: ", known(), ")");
  if (auto why = b->unavailable()) fail(ErrorCode::TransportError, name, " unavailable: ", *why);
  return b->create(store, setup);
}

}  // namespace tiercc
