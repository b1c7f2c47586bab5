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

#include "codegen/gpu_arch.h"

namespace gxc {

struct GpuDeviceInfo {
  int index = 0;  // as CUDA numbers it, after CUDA_VISIBLE_DEVICES
  std::string name;
  int64_t memoryBytes = 0;  // the whole memory (totalGlobalMem); see usableGpuMemory
  int major = 0;            // compute capability
  int minor = 0;

  GpuArch computeCapability() const { return GpuArch{major, minor, ""}; }
};

struct GpuEnumeration {
  std::vector<GpuDeviceInfo> gpus;
  std::string whyNone;  // when `gpus` is empty: "gxc was built without CUDA", CUDA's reason
};

// Whether this gxc has the cuda platform (was built with the CUDA toolkit).
bool builtWithCuda();

// Enumerated once per process; later calls return the first answer.
const GpuEnumeration& enumerateGpus();

// What gxc may allocate on GPU `index`: the memory free once the GPU's CUDA context exists
// (cudaMemGetInfo, after creating it: the context itself takes hundreds of MiB), less the
// cuBLASLt workspace the run allocates there. The driver measures it once per run, before the
// passes, and the same number is plan-memory's capacity and the caching allocator's, so a plan
// that fits is not refused for memory the GPU never had. Not counted: code the driver loads at
// a kernel's first launch (the graph's kernels, cuBLASLt's), and other processes' allocations
// after the measurement. A GPU whose free memory does not even hold the workspace is a
// runtime error (exit 3). Only builds with CUDA ask (a gxc bug elsewhere).
int64_t usableGpuMemory(int index);

// Refuses (usage error, exit 2) an `--arch` that one of `gpus` cannot run, naming the
// architecture and the GPU's compute capability: a run's kernels are built once, for all its
// GPUs, so the oldest decides (codegen/gpu_arch.h, archRunsOn).
void checkArchRunsOnGpus(const GpuArch& arch, const std::vector<GpuDeviceInfo>& gpus);

}  // namespace gxc
