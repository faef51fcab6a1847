// GoogleTest helpers for checking tiercc::Error: the code, and words of the message.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "tiercc/error.hpp"

namespace tiercc::test {

/// Runs f, which must throw tiercc::Error with `code`; returns the message (empty when it did not).
template <typename F>
std::string errorOf(F f, ErrorCode code) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "expected Error{" << toString(code) << "}, nothing was thrown";
  return {};
}

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace tiercc::test
