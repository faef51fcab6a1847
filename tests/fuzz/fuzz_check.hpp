// What every fuzz target shares: running a decoder on arbitrary input, where refusing it with
// tiercc::Error{InvalidArgument} is the expected outcome and anything else is a finding.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <exception>

#include "tiercc/error.hpp"

namespace tiercc::fuzz {

/// A finding: print it and abort, so that libFuzzer saves the input that caused it.
[[noreturn]] inline void finding(const char* what) {
  std::fprintf(stderr, "fuzz finding: %s\n", what);
  std::abort();
}

/// Runs decode(); InvalidArgument is a refusal (fine), any other exception a finding.
template <typename Decode>
void refusalIsFine(Decode decode) {
  try {
    decode();
  } catch (const Error& e) {
    if (e.code() != ErrorCode::InvalidArgument) finding(e.what());
  } catch (const std::exception& e) {
    finding(e.what());
  }
}

}  // namespace tiercc::fuzz
