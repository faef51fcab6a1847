// Tests that run a job over one scale-out transport by name (TIERCC_TRANSPORT): where this build
// or machine cannot run it, the test is skipped with the backend's own reason, printed.
#pragma once

#include <gtest/gtest.h>

#include "transport/factory.hpp"

#define TIERCC_SKIP_WITHOUT_TRANSPORT(name)                           \
  do {                                                                \
    if (auto why = ::tiercc::transportUnavailable(name))              \
      GTEST_SKIP() << "transport " << (name) << " skipped: " << *why; \
  } while (0)
