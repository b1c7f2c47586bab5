#include "target/target.h"

namespace gxc {

Target Target::of(const std::vector<Device>& devices) {
  Target target = withGpuMemory(devices, 0);
  target.memoryKnown = false;
  return target;
}

Target Target::withGpuMemory(const std::vector<Device>& devices, int64_t gpuMemoryBytes) {
  Target target;
  target.devices.clear();
  for (const Device& device : devices)
    target.devices.push_back({device, device.isCuda() ? gpuMemoryBytes : 0});
  target.memoryKnown = true;
  return target;
}

std::vector<Device> Target::deviceList() const {
  std::vector<Device> list;
  for (const TargetDevice& entry : devices) list.push_back(entry.device);
  return list;
}

int Target::gpuCount() const {
  int count = 0;
  for (const TargetDevice& entry : devices) count += entry.device.isCuda() ? 1 : 0;
  return count;
}

int64_t Target::memoryOf(const Device& device) const {
  if (!memoryKnown) return 0;
  for (const TargetDevice& entry : devices)
    if (entry.device == device) return entry.memoryBytes;
  return 0;
}

}  // namespace gxc
