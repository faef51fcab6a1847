// What tiercc-info reports about this machine's hardware and libraries: RDMA devices and
// their GIDs, UCX transports, CUDA devices. Each probe says why it found nothing.
#pragma once

#include <ostream>

namespace tiercc::info {

/// ibverbs devices, ports (state, MTU, link layer) and GIDs with their types.
void printVerbsDevices(std::ostream& out);
/// UCX version and its components' memory domains and transports (device names).
void printUcxResources(std::ostream& out);
/// CUDA devices visible to the runtime, or the runtime's reason for none.
void printCudaDevices(std::ostream& out);

}  // namespace tiercc::info
