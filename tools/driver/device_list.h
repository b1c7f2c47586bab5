// The --devices option: `cpu`, or GPU indices as the platform enumerates them. Entry i of the
// list becomes cuda:i in the model, so one model file runs on any set of GPUs.
#pragma once

#include <string>
#include <vector>

#include "ir/tensor_type.h"

namespace gxc {

struct DeviceList {
  std::vector<int> gpuIds;  // physical (or virtual) GPU of cuda:0, cuda:1, ...; empty: host only

  bool hostOnly() const { return gpuIds.empty(); }
  // The run's devices as the passes see them: {cpu} or {cuda:0, ..., cuda:N-1}.
  std::vector<Device> devices() const;
};

// A usage error for anything but `cpu` or distinct non-negative indices `0,1,...`.
DeviceList parseDevicesOption(const std::string& text);

}  // namespace gxc
