// tiercc-info: UCX's components, memory domains and transports (what UCX_TLS can select).
#include <map>
#include <string>
#include <vector>

#include "tools/info/probes.hpp"

#ifdef TIERCC_HAVE_UCX
#include <ucp/api/ucp.h>

#include "transport/ucx/ucx_resources.hpp"
#endif

namespace tiercc::info {

#ifdef TIERCC_HAVE_UCX
void printUcxResources(std::ostream& out) {
  out << "  UCX " << ucp_get_version_string() << "\n";
  const ucxnet::UcxResources found = ucxnet::ucxResources();
  if (found.error) {
    out << "    " << *found.error << "\n";
    return;
  }
  // One line per memory domain, in UCX's order.
  std::vector<std::string> order;
  std::map<std::string, std::string> lines;
  for (const ucxnet::UcxResource& r : found.list) {
    if (!lines.count(r.memoryDomain)) order.push_back(r.memoryDomain);
    lines[r.memoryDomain] += " " + r.transport + "/" + r.device;
  }
  for (const std::string& md : order) out << "    md " << md << ":" << lines[md] << "\n";
}
#else
void printUcxResources(std::ostream& out) {
  out << "  UCX: not built (configure found no ucx; apt-get install libucx-dev)\n";
}
#endif

}  // namespace tiercc::info
