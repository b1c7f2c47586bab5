// The --devices option: `cpu`, or GPU indices as the platform enumerates them. Entry i of the
// list becomes cuda:i in the model, so one model file runs on any set of GPUs.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ir/tensor_type.h"
#include "runtime/cuda/gpu_devices.h"

namespace gxc {

struct DeviceList {
  std::vector<int> gpuIds;  // physical (or virtual) GPU of cuda:0, cuda:1, ...; empty: host only
  // Real GPUs only, one per entry of gpuIds: what CUDA says of it, and what the run may
  // allocate there (usableGpuMemory), measured once, here: the Target's memory for cuda:i.
  std::vector<GpuDeviceInfo> gpus;
  std::vector<int64_t> gpuMemoryBytes;
  // No --devices and no GPU found: the host by default, which the driver says in a note.
  bool noGpuFound = false;

  bool hostOnly() const { return gpuIds.empty(); }
  // The run's devices as the passes see them: {cpu} or {cuda:0, ..., cuda:N-1}.
  std::vector<Device> devices() const;
};

// A usage error for anything but `cpu` or distinct non-negative indices `0,1,...`.
DeviceList parseDevicesOption(const std::string& text);

// --sim-gpus N[:MEM]: N virtual GPUs, each with MEM of memory (units B, KiB, MiB, GiB).
struct SimGpusOption {
  int count = 0;  // 0: no virtual GPUs
  int64_t memoryBytes = int64_t{80} << 30;
  bool enabled() const { return count > 0; }
};

SimGpusOption parseSimGpusOption(const std::string& text);

// Where the driver learns of real GPUs: this machine's, through CUDA (gpu_devices.h), unless a
// test hands in its own (whether gxc has CUDA, the GPUs, their memory), so that what reaches the
// Target can be tested in any build, without a GPU.
struct GpuProbe {
  std::function<bool()> builtWithCuda = gxc::builtWithCuda;
  std::function<const GpuEnumeration&()> enumerate = enumerateGpus;
  std::function<int64_t(int)> usableMemory = usableGpuMemory;
};

// The run's devices from --devices and --sim-gpus together: with virtual GPUs, the default is
// all of them and every index must name one; without, the real GPUs CUDA enumerates (see
// runtime/cuda/gpu_devices.h): the default is all of them, or the host where there is none
// (noGpuFound, for the caller's note), and an index that names no GPU is a usage error.
DeviceList resolveRunDevices(const std::string& devicesText, const SimGpusOption& sim,
                             const GpuProbe& probe = GpuProbe());

}  // namespace gxc
