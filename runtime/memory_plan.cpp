#include "runtime/memory_plan.h"

#include <map>
#include <unordered_set>

#include "ir/fused_kernel.h"
#include "ir/kernel_steps.h"
#include "ir/memory_attrs.h"

namespace gxc {
namespace {

std::pair<int, int> deviceKey(const Device& device) {
  return {static_cast<int>(device.kind), device.index};
}

}  // namespace

MemoryPlan::MemoryPlan(const Graph& graph) {
  std::map<std::pair<int, int>, Device> devices;
  for (const Value* input : graph.inputs())
    devices[deviceKey(input->type.device)] = input->type.device;
  for (const Op* op : graph.ops()) devices[deviceKey(op->device())] = op->device();
  for (const auto& [key, device] : devices) {
    GXC_CHECK(device.placed(), "graph '{}' has an unplaced value", graph.name());
    std::string attr = arenaAttrName(device);
    GXC_CHECK(graph.attrs().has(attr),
              "graph '{}' has no memory plan for {} (no `{}`): plan-memory did not run",
              graph.name(), device.str(), attr);
    arenas_.emplace_back(device, graph.attrs().getInt(attr, 0));
  }

  for (const Value* input : graph.inputs())
    placements_[input] = {Storage::Input, input->type.device, input, 0, input->type.bytes()};
  std::unordered_set<const Value*> internal = kernelInternalValues(graph);
  for (const Op* op : graph.ops()) {
    const Value* value = op->result;
    Placement placement{Storage::Nowhere, op->device(), nullptr, 0, value->type.bytes()};
    bool planned = op->attrs.has("offset");
    if (op->kind == OpKind::Param) {
      placement.storage = Storage::Param;
      placement.base = value;
    } else if (internal.count(value)) {
      placement.storage = Storage::Nowhere;
    } else if (op->kind == OpKind::Assign) {
      // The param's new value, in the param's own memory.
      placement = placementOf(op->operands[0]);
      GXC_CHECK(placement.storage == Storage::Param && !planned,
                "assign '{}' does not write a param's memory", op->layerName());
    } else if (stepKindOf(*op) == StepKind::View && !planned) {
      // A view of a resident value is that value's bytes.
      const Placement& seen = placementOf(op->operands[0]);
      GXC_CHECK(seen.storage == Storage::Param || seen.storage == Storage::Input,
                "layer '{}': a view of an activation without an `offset`", op->layerName());
      placement = seen;
      placement.offset += viewByteOffset(*op);
      placement.bytes = value->type.bytes();
      GXC_CHECK(placement.bytes <= placement.base->type.bytes() - placement.offset,
                "view '{}' reaches past the end of '{}'", op->layerName(), placement.base->name);
    } else {
      GXC_CHECK(planned, "layer '{}' has no `offset`: plan-memory did not run on this graph",
                op->layerName());
      placement.storage = Storage::Arena;
      placement.offset = op->attrs.getInt("offset", 0);
      if (stepKindOf(*op) == StepKind::View) {
        const Placement& seen = placementOf(op->operands[0]);
        GXC_CHECK(
            seen.storage == Storage::Arena && seen.offset + viewByteOffset(*op) == placement.offset,
            "view '{}' at offset {} is not on the bytes of '{}'", op->layerName(), placement.offset,
            op->operands[0]->name);
      }
    }
    GXC_CHECK(placement.storage == Storage::Arena || !planned,
              "layer '{}' has an `offset` but no place in the arena", op->layerName());
    if (placement.storage == Storage::Arena) {
      int64_t arena = arenaBytes(placement.device);
      GXC_CHECK(placement.offset >= 0 && placement.bytes <= arena - placement.offset,
                "layer '{}': bytes [{}, {}) lie outside {}'s arena of {} bytes", op->layerName(),
                placement.offset, placement.offset + placement.bytes, placement.device.str(),
                arena);
    }
    placements_[value] = placement;
  }
}

int64_t MemoryPlan::arenaBytes(const Device& device) const {
  for (const auto& [planned, bytes] : arenas_)
    if (planned == device) return bytes;
  return 0;
}

const Placement& MemoryPlan::placementOf(const Value* value) const {
  auto it = placements_.find(value);
  GXC_CHECK(it != placements_.end(), "value '{}' is not in the memory plan", value->name);
  return it->second;
}

}  // namespace gxc
