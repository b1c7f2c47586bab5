// For the GPU tests: skip, visibly and with the reason, where this machine has too few GPUs.
// ctest reports a skipped test as "Not Run (Skipped)", never as passed (tests/CMakeLists.txt).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "runtime/cuda/gpu_devices.h"

#define GXC_REQUIRE_GPUS(count)                                                          \
  do {                                                                                   \
    const ::gxc::GpuEnumeration& found = ::gxc::enumerateGpus();                         \
    if (found.gpus.size() < static_cast<size_t>(count))                                  \
      GTEST_SKIP() << "needs " << (count) << " GPU(s); found " << found.gpus.size()      \
                   << (found.gpus.empty() ? " (" + found.whyNone + ")" : std::string()); \
  } while (0)
