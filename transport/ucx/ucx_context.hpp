// The UCX (ucp) context shared by a UCX transport and the memory regions it hands out, which may
// outlive it. Created with tag matching, RMA and wakeup; UCX reads its own UCX_* environment
// (UCX_TLS, UCX_NET_DEVICES, ...), and tiercc only shortens the keepalive unless the user set it.
#pragma once

#include <ucp/api/ucp.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace tiercc::ucxnet {

class UcxContext {
 public:
  /// Initialises ucp; throws TransportError with UCX's reason when it cannot.
  UcxContext();
  ~UcxContext();
  UcxContext(const UcxContext&) = delete;
  UcxContext& operator=(const UcxContext&) = delete;

  ucp_context_h get() const { return context_; }
  /// Serialises memory (un)registration, which may come from any thread.
  std::mutex& memoryMutex() { return memoryMutex_; }

 private:
  ucp_context_h context_ = nullptr;
  std::mutex memoryMutex_;
};

/// Why UCX cannot run here (ucp_init fails), or nullopt. Computed once per process.
std::optional<std::string> ucxUnavailable();

/// "Connection reset by remote peer (-25)": UCX's text for a status, with its number.
std::string statusText(ucs_status_t status);

/// The UCX transports the context may use: the user's UCX_TLS, or tiercc's default ("^sysv").
std::string transportSelection();

}  // namespace tiercc::ucxnet
