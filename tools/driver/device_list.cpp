#include "tools/driver/device_list.h"

#include <algorithm>
#include <charconv>

#include "ir/diagnostic.h"

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

}  // namespace gxc
