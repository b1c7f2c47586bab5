// The graph attributes in which plan-memory records each device's memory (passes/plan_memory.h)
// and from which the executors size their arenas (runtime/memory_plan.h): `peak_cuda0`, what
// the device must hold (resident params and inputs plus the arena), and `arena_cuda0`, the
// bytes of its activations' arena. ':' does not lex in an attribute name, so "cuda:0" is
// written "cuda0".
#pragma once

#include <algorithm>
#include <string>

#include "ir/tensor_type.h"

namespace gxc {

inline std::string deviceAttrName(const std::string& prefix, const Device& device) {
  std::string name = prefix + "_" + device.str();
  name.erase(std::remove(name.begin(), name.end(), ':'), name.end());
  return name;
}

inline std::string peakAttrName(const Device& device) { return deviceAttrName("peak", device); }
inline std::string arenaAttrName(const Device& device) { return deviceAttrName("arena", device); }

}  // namespace gxc
