// The real GPUs of this machine, as CUDA enumerates them (after CUDA_VISIBLE_DEVICES).
//
// Every build has this interface; only a build with CUDA (GXC_HAVE_CUDA) can find a GPU.
// Enumerating is the first CUDA call a run makes, and the only one a run without GPUs makes:
// it loads the driver, so a machine without one (or without GPUs) finds zero GPUs and says
// why, and never crashes. Runs with --sim-gpus or --devices cpu never enumerate.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gxc {

struct GpuDeviceInfo {
  int index = 0;  // as CUDA numbers it, after CUDA_VISIBLE_DEVICES
  std::string name;
  int64_t memoryBytes = 0;
  int major = 0;  // compute capability
  int minor = 0;
};

struct GpuEnumeration {
  std::vector<GpuDeviceInfo> gpus;
  std::string whyNone;  // when `gpus` is empty: "gxc was built without CUDA", CUDA's reason
};

// Whether this gxc has the cuda platform (was built with the CUDA toolkit).
bool builtWithCuda();

// Enumerated once per process; later calls return the first answer.
const GpuEnumeration& enumerateGpus();

}  // namespace gxc
