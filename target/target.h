// The devices of one run as passes plan for them and platforms run on them: which devices,
// how much memory a plan may use on each, and the cost model that prices work there.
//
// The driver describes the run's devices once (the virtual GPUs of --sim-gpus, or the real
// GPUs CUDA finds, or the host alone) and hands the same Target to the passes and to the
// platform, so the capacity a plan is checked against is the capacity it runs in.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/tensor_type.h"
#include "target/cost_model.h"

namespace gxc {

struct TargetDevice {
  Device device;            // cpu, or cuda:i: entry i of the run's device list
  int64_t memoryBytes = 0;  // what a plan may use there; 0: not limited (the host)
};

struct Target {
  std::vector<TargetDevice> devices = {{Device::cpu(), 0}};
  // Whether memory sizes were given at all: gxc-opt without --device-memory plans buffers but
  // refuses nothing for size.
  bool memoryKnown = false;
  CostTable costs = h100SxmCosts();

  // A target of `devices` with no memory sizes: plans are made, nothing refused for size.
  static Target of(const std::vector<Device>& devices);
  // A target of `devices` whose GPUs have `gpuMemoryBytes` each (the host is not limited).
  static Target withGpuMemory(const std::vector<Device>& devices, int64_t gpuMemoryBytes);

  std::vector<Device> deviceList() const;
  int gpuCount() const;
  // The memory a plan may use on `device`; 0 when not limited or not known.
  int64_t memoryOf(const Device& device) const;
};

}  // namespace gxc
