// For the tests that need a GPU or NVRTC: skip, visibly and with the reason, where this machine
// has too few GPUs or this gxc was built without the CUDA toolkit. ctest reports a skipped test
// as "Not Run (Skipped)", never as passed (tests/CMakeLists.txt). Compiles in every build.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "codegen/nvrtc_compiler.h"
#include "runtime/cuda/gpu_devices.h"

#define GXC_REQUIRE_GPUS(count)                                                          \
  do {                                                                                   \
    const ::gxc::GpuEnumeration& found = ::gxc::enumerateGpus();                         \
    if (found.gpus.size() < static_cast<size_t>(count))                                  \
      GTEST_SKIP() << "needs " << (count) << " GPU(s); found " << found.gpus.size()      \
                   << (found.gpus.empty() ? " (" + found.whyNone + ")" : std::string()); \
  } while (0)

#define GXC_REQUIRE_NVRTC()                                                                 \
  do {                                                                                      \
    if (!::gxc::nvrtcAvailable())                                                           \
      GTEST_SKIP() << "needs NVRTC: this gxc was built without CUDA (NVRTC is part of the " \
                      "CUDA toolkit)";                                                      \
  } while (0)
