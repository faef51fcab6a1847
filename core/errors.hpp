// Helpers to raise tiercc::Error with a formatted message, used throughout the library.
#pragma once

#include <cerrno>
#include <cstring>
#include <sstream>
#include <string>

#include "tiercc/error.hpp"

namespace tiercc {

/// Concatenates the arguments with operator<< into one string.
template <typename... Args>
std::string concat(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}

/// Throws Error{code} with the concatenated message.
template <typename... Args>
[[noreturn]] void fail(ErrorCode code, const Args&... args) {
  throw Error(code, concat(args...));
}

/// Throws Error{SystemError} naming the call and errno's text.
[[noreturn]] inline void failErrno(const std::string& call, int err = errno) {
  throw Error(ErrorCode::SystemError, call + ": " + std::strerror(err));
}

/// An error that every rank taking part raises alike, from what they agreed (a direct path's
/// descriptors saying the ranks' calls differ): the rank that raises it needs no other rank's
/// verdict, and no hang diagnosis, to say what went wrong.
class AgreedError : public Error {
 public:
  using Error::Error;
};

}  // namespace tiercc

/// Fails with InvalidArgument when the condition is false.
#define TIERCC_REQUIRE_ARG(cond, ...)                                  \
  do {                                                                 \
    if (!(cond)) ::tiercc::fail(::tiercc::ErrorCode::InvalidArgument, __VA_ARGS__); \
  } while (0)
