// Phases 1 and 2 of split-layers: which layers can be split, the memory left on each device,
// and the choice of shards for a layer (the essay is in split_layers.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "passes/pass.h"

namespace gxc {

// A matmul or linear whose weight is a whole 2-D param that this layer alone reads.
struct SplittableLayer {
  Op* op = nullptr;
  Op* weight = nullptr;  // the param op
  size_t weightOperand = 0;
  Value* activation = nullptr;  // the other GEMM operand
  int64_t weightFreeAxis = 0;   // the weight's axis that becomes an axis of the result
  int64_t weightReduceAxis = 0;
  int64_t activationReduceAxis = 0;
  int64_t resultAxis = 0;  // the result's axis that weightFreeAxis becomes
};

// How many times each value is read: as an operand (once per operand slot) or an output.
using ReaderCounts = std::unordered_map<const Value*, int>;
ReaderCounts countReaders(const Graph& graph);

// nullopt when `op` is not a layer split-layers knows how to split (or is a shard already).
std::optional<SplittableLayer> splittableLayer(Op* op, const ReaderCounts& readers);

enum class SplitKind {
  Output,     // the weight's free axis: shards of the result, concatenated
  Reduction,  // the reduction axis: partial results of the full shape, added
};

// [start, end) along the split axis, and the device of that shard.
struct ShardRange {
  int64_t start = 0;
  int64_t end = 0;
  Device device;
};

struct SplitPlan {
  SplitKind kind = SplitKind::Output;
  std::vector<ShardRange> shards;
  int64_t bytesMoved = 0;  // between devices, by the shards' operands and results
};

// Memory per device of the run, read off the IR: its capacity, the params resident on it, and
// the largest working set of one op there (the activation operands and result of an op are
// live together at its step), the two largest being kept so that a layer can leave its own
// out. The host and devices with no capacity given are unlimited.
class DeviceRoom {
 public:
  DeviceRoom(const Graph& graph, const PassContext& context);
  const std::vector<Device>& gpus() const { return gpus_; }  // the limited GPUs, in run order
  bool limited(const Device& device) const;
  int64_t capacity(const Device& device) const;
  int64_t resident(const Device& device) const;
  int64_t maxWorkingExcept(const Device& device, const Op* op) const;
  // Its params and largest working set exceed its memory: some op there cannot run.
  bool over(const Device& device) const;
  // Whether `device` still holds its params, `extraResident` more, and at one step the
  // larger of its largest working set (but `except`'s) and `working`.
  bool holds(const Device& device, int64_t extraResident, int64_t working, const Op* except) const;
  // Capacity less params and the largest working set: how the planner ranks devices.
  int64_t left(const Device& device) const;
  void take(const Device& device, int64_t residentBytes);
  // "cuda:0 1.0 GiB, cuda:1 0 B": every GPU's room, for messages.
  std::string describe() const;

 private:
  struct Slot {
    Device device;
    int64_t capacity = 0;  // 0: unlimited
    int64_t resident = 0;
    int64_t largest = 0, second = 0;  // working sets
    const Op* largestOp = nullptr;
  };
  const Slot* find(const Device& device) const;
  Slot* find(const Device& device) { return const_cast<Slot*>(std::as_const(*this).find(device)); }
  std::vector<Slot> slots_;
  std::vector<Device> gpus_;
};

// Bytes an op needs at its step beyond the params resident on its device: its operands that
// are not params, and its result (a transfer: its result only).
int64_t workingBytes(const Op& op);

// Phase 2 for one layer whose weight has been taken off its device's room: the cheapest
// split that fits (fewest bytes moved over the two kinds, each with its smallest shard
// count), or nullopt when none fits on the run's GPUs.
std::optional<SplitPlan> planSplit(const SplittableLayer& layer, const DeviceRoom& room);

}  // namespace gxc
