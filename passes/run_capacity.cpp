#include "passes/run_capacity.h"

#include <algorithm>
#include <map>

#include "ir/param_shard.h"
#include "target/byte_size.h"

namespace gxc {
namespace {

// One key per tensor the run must hold at least once: the param's name, and its slice.
std::string tensorKey(const Op& param) {
  std::string key = param.attrs.getString("name", param.layerName());
  if (std::optional<ParamShard> shard = paramShard(param))
    key += fmt::format("[{}:{}:{}]", shard->axis, shard->start, shard->end);
  return key;
}

}  // namespace

void refuseParamsBeyondRunMemory(const Graph& graph, const PassContext& context) {
  if (!context.target.memoryKnown) return;
  int64_t capacity = 0;
  for (const TargetDevice& entry : context.target.devices) {
    if (entry.memoryBytes <= 0) return;  // a device without a limit holds anything
    capacity += entry.memoryBytes;
  }
  std::map<std::string, const Value*> tensors;
  for (const Op* op : graph.ops())
    if (op->kind == OpKind::Param) tensors.emplace(tensorKey(*op), op->result);
  int64_t needed = 0;
  std::vector<const Value*> largest;
  for (const auto& [key, value] : tensors) {
    needed += value->type.bytes();
    largest.push_back(value);
  }
  if (needed <= capacity) return;
  std::stable_sort(largest.begin(), largest.end(), [](const Value* a, const Value* b) {
    return a->type.bytes() > b->type.bytes();
  });
  std::string names, devices;
  for (size_t i = 0; i < std::min<size_t>(3, largest.size()); ++i)
    names += fmt::format("{}{} {}", i == 0 ? "" : ", ", largest[i]->name,
                         formatBytes(largest[i]->type.bytes()));
  for (const TargetDevice& entry : context.target.devices)
    devices += (devices.empty() ? "" : ", ") + entry.device.str();
  modelError({}, "the plan does not fit: its params alone need {}, {} {} {}{} (largest: {})",
             formatBytes(needed), devices, context.target.devices.size() == 1 ? "has" : "have",
             formatBytes(capacity), context.target.devices.size() == 1 ? "" : " in all", names);
}

}  // namespace gxc
