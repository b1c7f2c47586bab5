#include "tools/driver/device_list.h"

#include <algorithm>
#include <charconv>
#include <optional>

#include "ir/diagnostic.h"
#include "runtime/cuda/gpu_devices.h"
#include "target/byte_size.h"

namespace gxc {

std::vector<Device> DeviceList::devices() const {
  if (hostOnly()) return {Device::cpu()};
  std::vector<Device> result;
  for (size_t i = 0; i < gpuIds.size(); ++i) result.push_back(Device::cuda(static_cast<int>(i)));
  return result;
}

DeviceList parseDevicesOption(const std::string& text) {
  DeviceList list;
  if (text == "cpu") return list;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = std::min(text.find(',', start), text.size());
    std::string_view entry(text.data() + start, comma - start);
    int id = -1;
    auto [end, ec] = std::from_chars(entry.data(), entry.data() + entry.size(), id);
    if (entry.empty() || ec != std::errc() || end != entry.data() + entry.size() || id < 0)
      usageError("--devices {}: expected cpu or GPU indices such as 0,1", text);
    if (std::find(list.gpuIds.begin(), list.gpuIds.end(), id) != list.gpuIds.end())
      usageError("--devices {}: GPU {} is listed twice", text, id);
    list.gpuIds.push_back(id);
    start = comma + 1;
  }
  return list;
}

SimGpusOption parseSimGpusOption(const std::string& text) {
  auto fail = [&]() -> SimGpusOption {
    usageError("--sim-gpus {}: expected N[:MEM] with N from 1 to 64 and MEM such as 16GiB", text);
  };
  SimGpusOption option;
  size_t colon = text.find(':');
  std::string_view count(text.data(), colon == std::string::npos ? text.size() : colon);
  auto [end, ec] = std::from_chars(count.data(), count.data() + count.size(), option.count);
  if (count.empty() || ec != std::errc() || end != count.data() + count.size() ||
      option.count < 1 || option.count > 64)
    return fail();
  if (colon == std::string::npos) return option;
  std::optional<int64_t> memoryBytes = parseByteSize(std::string_view(text).substr(colon + 1));
  if (!memoryBytes) return fail();
  option.memoryBytes = *memoryBytes;
  return option;
}

namespace {

// Without --sim-gpus: the GPUs CUDA finds. Only here is the driver loaded (enumerateGpus),
// and only when the run could use a GPU, so `--devices cpu` never touches CUDA.
DeviceList resolveRealDevices(const std::string& devicesText, const GpuProbe& probe) {
  if (devicesText == "cpu") return {};
  DeviceList requested;
  if (!devicesText.empty()) requested = parseDevicesOption(devicesText);
  DeviceList host;
  host.noGpuFound = true;
  if (!probe.builtWithCuda() && requested.hostOnly()) return host;
  if (!probe.builtWithCuda())
    usageError(
        "--devices {}: this gxc was built without CUDA; use --sim-gpus N for virtual GPUs, or "
        "--devices cpu",
        devicesText);
  const GpuEnumeration& found = probe.enumerate();
  int count = static_cast<int>(found.gpus.size());
  if (devicesText.empty()) {
    if (count == 0) return host;
    for (int i = 0; i < count; ++i) requested.gpuIds.push_back(i);
  }
  for (int id : requested.gpuIds) {
    if (id < count) continue;
    if (count == 0)
      usageError(
          "--devices {}: there is no GPU {}: no GPU found ({}); use --sim-gpus N for virtual "
          "GPUs, or --devices cpu",
          devicesText, id, found.whyNone);
    usageError("--devices {}: there is no GPU {}; CUDA finds GPUs 0 to {}", devicesText, id,
               count - 1);
  }
  for (int id : requested.gpuIds) {
    requested.gpus.push_back(found.gpus[id]);
    requested.gpuMemoryBytes.push_back(probe.usableMemory(id));
  }
  return requested;
}

}  // namespace

DeviceList resolveRunDevices(const std::string& devicesText, const SimGpusOption& sim,
                             const GpuProbe& probe) {
  if (!sim.enabled()) return resolveRealDevices(devicesText, probe);
  if (devicesText.empty()) {
    DeviceList all;
    for (int i = 0; i < sim.count; ++i) all.gpuIds.push_back(i);
    return all;
  }
  DeviceList list = parseDevicesOption(devicesText);
  for (int id : list.gpuIds)
    if (id >= sim.count)
      usageError("--devices {}: there is no GPU {}; --sim-gpus {} makes GPUs 0 to {}", devicesText,
                 id, sim.count, sim.count - 1);
  return list;
}

}  // namespace gxc
