// tiercc-info: UCX's components, memory domains and transports (what UCX_TLS can select).
#include <vector>

#include "tools/info/probes.hpp"

#ifdef TIERCC_HAVE_UCX
#include <ucp/api/ucp.h>
#include <uct/api/uct.h>
#endif

namespace tiercc::info {

#ifdef TIERCC_HAVE_UCX
namespace {

void printMdTransports(std::ostream& out, uct_component_h component, const char* mdName) {
  uct_md_config_t* config = nullptr;
  if (uct_md_config_read(component, nullptr, nullptr, &config) != UCS_OK) return;
  uct_md_h md = nullptr;
  ucs_status_t st = uct_md_open(component, mdName, config, &md);
  uct_config_release(config);
  if (st != UCS_OK) return;
  uct_tl_resource_desc_t* tls = nullptr;
  unsigned count = 0;
  if (uct_md_query_tl_resources(md, &tls, &count) == UCS_OK) {
    out << "    md " << mdName << ":";
    for (unsigned i = 0; i < count; ++i) out << " " << tls[i].tl_name << "/" << tls[i].dev_name;
    out << (count ? "\n" : " (no transports)\n");
    uct_release_tl_resource_list(tls);
  }
  uct_md_close(md);
}

}  // namespace

void printUcxResources(std::ostream& out) {
  out << "  UCX " << ucp_get_version_string() << "\n";
  uct_component_h* components = nullptr;
  unsigned n = 0;
  if (uct_query_components(&components, &n) != UCS_OK) {
    out << "    uct_query_components failed\n";
    return;
  }
  for (unsigned c = 0; c < n; ++c) {
    uct_component_attr_t attr{};
    attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME | UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT;
    if (uct_component_query(components[c], &attr) != UCS_OK) continue;
    std::vector<uct_md_resource_desc_t> mds(attr.md_resource_count);
    attr.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
    attr.md_resources = mds.data();
    if (uct_component_query(components[c], &attr) != UCS_OK) continue;
    for (auto& md : mds) printMdTransports(out, components[c], md.md_name);
  }
  uct_release_component_list(components);
}
#else
void printUcxResources(std::ostream& out) {
  out << "  UCX: not built (configure found no ucx; apt-get install libucx-dev)\n";
}
#endif

}  // namespace tiercc::info
