#include "passes/split_layers_plan.h"

#include <algorithm>
#include <limits>

#include "ir/param_shard.h"
#include "target/byte_size.h"

namespace gxc {
namespace {

bool isWholeParam2d(const Value* value) {
  return value->producer && value->producer->kind == OpKind::Param &&
         !paramShard(*value->producer) && value->type.rank() == 2;
}

// np.array_split: `parts` ranges of n, the first n % parts of them one longer.
std::vector<ShardRange> splitEvenly(int64_t n, int64_t parts) {
  std::vector<ShardRange> ranges;
  int64_t start = 0;
  for (int64_t i = 0; i < parts; ++i) {
    int64_t length = n / parts + (i < n % parts ? 1 : 0);
    ranges.push_back({start, start + length, {}});
    start += length;
  }
  return ranges;
}

// The bytes one shard brings to its device: its weight, and what it reads and writes.
struct ShardBytes {
  int64_t weight = 0;
  int64_t working = 0;
  int64_t activation = 0;  // the part of the activation it reads
  int64_t result = 0;
};

class ShardSizes {
 public:
  ShardSizes(const SplittableLayer& layer, SplitKind kind) : layer_(layer), kind_(kind) {}

  int64_t splitLength() const {
    return layer_.weight->result->type.shape[static_cast<size_t>(axis())];
  }

  ShardBytes of(const ShardRange& range) const {
    int64_t length = range.end - range.start, n = splitLength();
    ShardBytes bytes;
    bytes.weight = layer_.weight->result->type.bytes() / n * length;
    int64_t activation = layer_.activation->type.bytes(), result = layer_.op->result->type.bytes();
    bytes.activation = kind_ == SplitKind::Output ? activation : activation / n * length;
    bytes.result = kind_ == SplitKind::Output ? result / n * length : result;
    bytes.working = bytes.activation + bytes.result;
    return bytes;
  }

  // What combining needs on the layer's device: the shards' results and the whole result
  // (a concat), or two partials and their sum (each add of the chain). A bias added after
  // either reads one whole result and writes another, no more.
  int64_t combine() const {
    return layer_.op->result->type.bytes() * (kind_ == SplitKind::Output ? 2 : 3);
  }

 private:
  int64_t axis() const {
    return kind_ == SplitKind::Output ? layer_.weightFreeAxis : layer_.weightReduceAxis;
  }

  const SplittableLayer& layer_;
  SplitKind kind_;
};

// Devices for `ranges` in order of preference: the layer's own device (its shard's result
// stays put), then the most room, the lowest index on ties. nullopt when they do not fit.
std::optional<SplitPlan> placeShards(const SplittableLayer& layer, SplitKind kind,
                                     std::vector<ShardRange> ranges, const DeviceRoom& room) {
  const Op* op = layer.op;
  const Device home = op->device();
  const Device source = layer.activation->type.device;
  ShardSizes sizes(layer, kind);
  // The transient sets besides the shards': the combine on the layer's device, and for a
  // reduction split a slice of the activation next to the activation itself.
  int64_t sliceWorking = kind == SplitKind::Reduction
                             ? layer.activation->type.bytes() + sizes.of(ranges[0]).activation
                             : 0;
  auto extraWorking = [&](const Device& device) {
    int64_t working = 0;
    if (device == home) working = std::max(working, sizes.combine());
    if (device == source) working = std::max(working, sliceWorking);
    return working;
  };
  std::vector<Device> candidates = room.gpus();
  std::stable_sort(candidates.begin(), candidates.end(), [&](const Device& a, const Device& b) {
    if ((a == home) != (b == home)) return a == home;
    return room.left(a) > room.left(b);
  });
  size_t next = 0;
  std::vector<Device> used;
  for (const Device& device : candidates) {
    if (next == ranges.size()) break;
    ShardBytes bytes = sizes.of(ranges[next]);
    if (!room.holds(device, bytes.weight, std::max(bytes.working, extraWorking(device)), op))
      continue;
    ranges[next++].device = device;
    used.push_back(device);
  }
  if (next < ranges.size()) return std::nullopt;
  for (const Device& device : {home, source})
    if (std::find(used.begin(), used.end(), device) == used.end() &&
        !room.holds(device, 0, extraWorking(device), op))
      return std::nullopt;
  SplitPlan plan;
  plan.kind = kind;
  for (const ShardRange& range : ranges) {
    ShardBytes bytes = sizes.of(range);
    if (range.device != source) plan.bytesMoved += bytes.activation;
    if (range.device != home) plan.bytesMoved += bytes.result;
  }
  plan.shards = std::move(ranges);
  return plan;
}

// The smallest shard count that fits, for one kind of split.
std::optional<SplitPlan> smallestFit(const SplittableLayer& layer, SplitKind kind,
                                     const DeviceRoom& room) {
  int64_t n = ShardSizes(layer, kind).splitLength();
  int64_t most = std::min<int64_t>(n, static_cast<int64_t>(room.gpus().size()));
  for (int64_t parts = 2; parts <= most; ++parts)
    if (auto plan = placeShards(layer, kind, splitEvenly(n, parts), room)) return plan;
  return std::nullopt;
}

}  // namespace

ReaderCounts countReaders(const Graph& graph) {
  ReaderCounts readers;
  for (const Op* op : graph.ops())
    for (const Value* operand : op->operands) ++readers[operand];
  for (const GraphOutput& output : graph.outputs()) ++readers[output.value];
  return readers;
}

std::optional<SplittableLayer> splittableLayer(Op* op, const ReaderCounts& readers) {
  if ((op->kind != OpKind::Matmul && op->kind != OpKind::Linear) || op->attrs.has("shard_of"))
    return std::nullopt;
  SplittableLayer layer;
  layer.op = op;
  int64_t resultRank = op->result->type.rank();
  if (op->kind == OpKind::Linear) {  // y = x W^T + b, W [out, in]
    layer.weightOperand = 1;
    layer.weightFreeAxis = 0;
    layer.weightReduceAxis = 1;
    layer.activationReduceAxis = op->operands[0]->type.rank() - 1;
    layer.resultAxis = resultRank - 1;
  } else {
    // The weight is the larger of the 2-D param operands; the other operand is the activation.
    std::optional<size_t> pick;
    for (size_t i = 0; i < 2; ++i)
      if (isWholeParam2d(op->operands[i]) &&
          (!pick || op->operands[i]->type.bytes() > op->operands[*pick]->type.bytes()))
        pick = i;
    if (!pick) return std::nullopt;
    layer.weightOperand = *pick;
    bool transposeA = op->attrs.getBool("transpose_a", false);
    bool transposeB = op->attrs.getBool("transpose_b", false);
    int64_t otherRank = op->operands[1 - *pick]->type.rank();
    if (*pick == 0) {  // W @ B: W's rows are the result's rows
      layer.weightFreeAxis = transposeA ? 1 : 0;
      layer.activationReduceAxis = transposeB ? otherRank - 1 : otherRank - 2;
      layer.resultAxis = resultRank - 2;
    } else {  // A @ W: W's columns are the result's columns
      layer.weightFreeAxis = transposeB ? 0 : 1;
      layer.activationReduceAxis = transposeA ? otherRank - 2 : otherRank - 1;
      layer.resultAxis = resultRank - 1;
    }
    layer.weightReduceAxis = 1 - layer.weightFreeAxis;
  }
  Value* weight = op->operands[layer.weightOperand];
  // Read once, by this layer alone: splitting it takes the whole param away.
  if (!isWholeParam2d(weight) || readers.at(weight) != 1 || weight->type.device != op->device())
    return std::nullopt;
  layer.weight = weight->producer;
  layer.activation = op->operands[layer.weightOperand == 0 ? 1 : 0];
  return layer;
}

DeviceRoom::DeviceRoom(const Graph& graph, const PassContext& context) {
  for (size_t i = 0; i < context.target.devices.size(); ++i) {
    Slot slot;
    slot.device = context.target.devices[i].device;
    slot.capacity = context.target.memoryOf(slot.device);
    if (slot.device.isCuda() && slot.capacity > 0) gpus_.push_back(slot.device);
    slots_.push_back(slot);
  }
  for (const Op* op : graph.ops()) {
    Slot* slot = find(op->device());
    if (!slot) continue;
    if (op->kind == OpKind::Param) {
      slot->resident += op->result->type.bytes();
      continue;
    }
    int64_t working = workingBytes(*op);
    if (working > slot->largest) {
      slot->second = slot->largest;
      slot->largest = working;
      slot->largestOp = op;
    } else {
      slot->second = std::max(slot->second, working);
    }
  }
}

const DeviceRoom::Slot* DeviceRoom::find(const Device& device) const {
  for (const Slot& slot : slots_)
    if (slot.device == device) return &slot;
  return nullptr;
}

bool DeviceRoom::limited(const Device& device) const {
  const Slot* slot = find(device);
  return slot && slot->capacity > 0;
}

int64_t DeviceRoom::capacity(const Device& device) const {
  return limited(device) ? find(device)->capacity : 0;
}

int64_t DeviceRoom::resident(const Device& device) const {
  const Slot* slot = find(device);
  return slot ? slot->resident : 0;
}

int64_t DeviceRoom::maxWorkingExcept(const Device& device, const Op* op) const {
  const Slot* slot = find(device);
  if (!slot) return 0;
  return slot->largestOp == op ? slot->second : slot->largest;
}

bool DeviceRoom::over(const Device& device) const {
  return limited(device) && !holds(device, 0, 0, nullptr);
}

bool DeviceRoom::holds(const Device& device, int64_t extraResident, int64_t working,
                       const Op* except) const {
  if (!limited(device)) return true;
  return resident(device) + extraResident + std::max(maxWorkingExcept(device, except), working) <=
         capacity(device);
}

int64_t DeviceRoom::left(const Device& device) const {
  if (!limited(device)) return std::numeric_limits<int64_t>::max();
  return capacity(device) - resident(device) - maxWorkingExcept(device, nullptr);
}

void DeviceRoom::take(const Device& device, int64_t residentBytes) {
  if (Slot* slot = find(device)) slot->resident += residentBytes;
}

std::string DeviceRoom::describe() const {
  std::string text;
  for (const Device& gpu : gpus_)
    text += fmt::format("{}{} {}", text.empty() ? "" : ", ", gpu.str(),
                        formatBytes(std::max<int64_t>(0, left(gpu))));
  return text;
}

int64_t workingBytes(const Op& op) {
  int64_t bytes = op.result->type.bytes();
  // A transfer's operand stays on its own device; any other op's operand from elsewhere
  // arrives as a copy on this one, so it counts here.
  if (op.kind == OpKind::To || op.kind == OpKind::Copy) return bytes;
  for (const Value* operand : op.operands)
    if (!operand->producer || operand->producer->kind != OpKind::Param)
      bytes += operand->type.bytes();
  return bytes;
}

std::optional<SplitPlan> planSplit(const SplittableLayer& layer, const DeviceRoom& room) {
  std::optional<SplitPlan> output = smallestFit(layer, SplitKind::Output, room);
  std::optional<SplitPlan> reduction = smallestFit(layer, SplitKind::Reduction, room);
  // Fewer bytes moved wins; a tie goes to the output split, whose concat is exact where
  // the sum of partials adds in another order than the unsplit GEMM.
  if (output && (!reduction || output->bytesMoved <= reduction->bytesMoved)) return output;
  return reduction;
}

}  // namespace gxc
