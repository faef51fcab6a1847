// UCT's enumeration of components, memory domains and transports (see ucx_resources.hpp).
#include "transport/ucx/ucx_resources.hpp"

#include <uct/api/uct.h>

#include "core/errors.hpp"
#include "transport/ucx/ucx_context.hpp"

namespace tiercc::ucxnet {

namespace {

// The transports of one memory domain; a domain that cannot be opened here has none.
void addDomainTransports(uct_component_h component, const char* mdName, std::vector<UcxResource>& out) {
  uct_md_config_t* config = nullptr;
  if (uct_md_config_read(component, nullptr, nullptr, &config) != UCS_OK) return;
  uct_md_h md = nullptr;
  const ucs_status_t opened = uct_md_open(component, mdName, config, &md);
  uct_config_release(config);
  if (opened != UCS_OK) return;
  uct_tl_resource_desc_t* tls = nullptr;
  unsigned count = 0;
  if (uct_md_query_tl_resources(md, &tls, &count) == UCS_OK) {
    for (unsigned i = 0; i < count; ++i)
      out.push_back({mdName, tls[i].tl_name, tls[i].dev_name, tls[i].dev_type == UCT_DEVICE_TYPE_NET});
    uct_release_tl_resource_list(tls);
  }
  uct_md_close(md);
}

}  // namespace

UcxResources ucxResources() {
  UcxResources found;
  uct_component_h* components = nullptr;
  unsigned n = 0;
  if (const ucs_status_t st = uct_query_components(&components, &n); st != UCS_OK) {
    found.error = "uct_query_components: " + statusText(st);
    return found;
  }
  for (unsigned c = 0; c < n; ++c) {
    uct_component_attr_t attr{};
    attr.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT;
    if (uct_component_query(components[c], &attr) != UCS_OK) continue;
    std::vector<uct_md_resource_desc_t> mds(attr.md_resource_count);
    attr.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
    attr.md_resources = mds.data();
    if (uct_component_query(components[c], &attr) != UCS_OK) continue;
    for (const uct_md_resource_desc_t& md : mds) addDomainTransports(components[c], md.md_name, found.list);
  }
  uct_release_component_list(components);
  return found;
}

std::optional<std::string> ucxOnlyHasSockets() {
  static const std::optional<std::string> kWhy = []() -> std::optional<std::string> {
    const UcxResources found = ucxResources();
    if (found.error) return std::nullopt;  // nothing known against it: ucxUnavailable decides
    std::string sockets;
    for (const UcxResource& r : found.list) {
      if (!r.network) continue;
      if (r.transport != "tcp") return std::nullopt;
      sockets += (sockets.empty() ? "" : " ") + r.transport + "/" + r.device;
    }
    return concat("UCX reaches other hosts here only by sockets (",
                  sockets.empty() ? std::string("no network transport at all") : sockets,
                  "), which the tcp transport does faster; TIERCC_TRANSPORT=ucx picks it");
  }();
  return kWhy;
}

}  // namespace tiercc::ucxnet
