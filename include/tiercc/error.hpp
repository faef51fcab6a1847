// tiercc::Error: the one exception type of the C++ API, carrying a code a program can act on.
#pragma once

#include <stdexcept>
#include <string>

namespace tiercc {

/// Error codes; values match tiercc_result_t in tiercc.h (Ok = tiercc_success).
enum class ErrorCode : int {
  Ok = 0,
  InvalidArgument,  ///< bad input; nothing was changed
  Timeout,          ///< a deadline passed; the message names the operation, tier and peer
  PeerFailure,      ///< another rank died or stopped answering; the message names it
  TransportError,   ///< a network or shared-memory fault
  SystemError,      ///< an operating-system call failed
  Aborted,          ///< the communicator was aborted
  Internal,         ///< a bug in tiercc
  NotSupported,     ///< not implemented yet for this case
};

/// "invalid argument", "timeout", ...
const char* toString(ErrorCode code);

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& what) : std::runtime_error(what), code_(code) {}
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

}  // namespace tiercc
