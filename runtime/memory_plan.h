// What the executors read of plan-memory's result (passes/plan_memory.h): where every value of
// a planned graph lives while it runs, and the size of each device's arena.
//
// What it does: reads the graph attributes `arena_DEVICE` (ir/memory_attrs.h) and each op's
// `offset`, and follows views to the bytes they see. An *activation* (or a view of one) lives
// in its device's arena at its offset; a param, a graph input, or a view of one lives in that
// param's or input's own memory, which the platform keeps (its caching allocator, the caller's
// tensor); a fused kernel's inner value lives nowhere.
// Requires: a graph after plan-memory (nothing moved or retyped since).
// Guarantees: every placement lies inside its arena, or inside its base; a view lies where its
// operand's bytes say (ir/kernel_steps.h, viewByteOffset). A graph that breaks this was not
// planned by plan-memory, and is reported as a gxc bug (GXC_CHECK).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/graph.h"

namespace gxc {

enum class Storage {
  Arena,   // at `offset` in its device's arena
  Param,   // in a param's memory (`base`), from `offset` on
  Input,   // in a graph input's memory (`base`), from `offset` on
  Nowhere  // a fused kernel's inner value: kept in registers
};

struct Placement {
  Storage storage = Storage::Nowhere;
  Device device;
  const Value* base = nullptr;  // Param and Input: the param's or input's value
  int64_t offset = 0;           // bytes into the arena, or into the base
  int64_t bytes = 0;
};

class MemoryPlan {
 public:
  explicit MemoryPlan(const Graph& graph);

  // Every device that holds a value, cpu first, then cuda:0, cuda:1, ..., with its arena's
  // bytes (0 where it holds no activation).
  const std::vector<std::pair<Device, int64_t>>& arenas() const { return arenas_; }
  int64_t arenaBytes(const Device& device) const;
  const Placement& placementOf(const Value* value) const;

 private:
  std::vector<std::pair<Device, int64_t>> arenas_;
  std::unordered_map<const Value*, Placement> placements_;
};

}  // namespace gxc
