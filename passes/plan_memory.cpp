#include "passes/plan_memory.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "ir/fused_kernel.h"
#include "ir/kernel_steps.h"
#include "passes/plan_memory_packing.h"
#include "passes/plan_memory_streams.h"
#include "target/byte_size.h"

namespace gxc {
namespace {

[[noreturn]] void tooLarge(const Value* value) {
  modelError(value->producer ? value->producer->loc : value->loc,
             "'{}' ({}) does not fit in a 64-bit byte count", value->name, value->type.str());
}

// The value's size in bytes, checked (a shape may be valid and its bytes still overflow).
int64_t valueBytes(const Value* value) {
  GXC_CHECK(value->type.known, "plan-memory before infer-shapes: '{}' has no type", value->name);
  GXC_CHECK(value->type.device.placed(), "plan-memory before assign-devices: '{}' is unplaced",
            value->name);
  std::optional<int64_t> numel = checkedNumel(value->type.shape);
  int64_t bytes = 0;
  if (!numel ||
      __builtin_mul_overflow(*numel, static_cast<int64_t>(dtypeSize(value->type.dtype)), &bytes))
    tooLarge(value);
  return bytes;
}

int64_t roundedBytes(const Value* value, int64_t bytes) {
  int64_t rounded = 0;
  if (__builtin_add_overflow(bytes, kPlanAlignmentBytes - 1, &rounded)) tooLarge(value);
  return rounded / kPlanAlignmentBytes * kPlanAlignmentBytes;
}

// Phase 1: every buffer of the graph with its lifetime, and every view with the buffer it
// sees. A fused kernel's inner values have none; its root's buffer is live from the kernel's
// first step, since the kernel writes it while it reads every operand of every member.
struct Liveness {
  std::vector<PlannedBuffer> buffers;
  std::vector<PlannedView> views;  // base and offset into the base, before packing
  // By buffer: the ops that access its bytes when the graph runs: the root of the step that
  // writes it, and of every step that reads it or a view of it.
  std::vector<std::vector<const Op*>> accessors;
};

Liveness liveness(const Graph& graph, const KernelSteps& steps) {
  const auto end = static_cast<int64_t>(graph.ops().size());  // the step after the last op
  std::unordered_set<const Value*> internal = kernelInternalValues(graph);
  std::unordered_map<const Value*, int64_t> kernelStart;
  for (const KernelSpan& span : kernelSpans(graph))
    kernelStart[graph.ops()[span.last]->result] = static_cast<int64_t>(span.first);
  Liveness live;
  // The buffer holding each value's bytes (a view's: the buffer it sees), and where in it.
  std::unordered_map<const Value*, size_t> bufferOf;
  std::unordered_map<const Value*, int64_t> offsetInBuffer;
  auto add = [&](const Value* value, int64_t step, bool resident) {
    PlannedBuffer buffer;
    buffer.value = value;
    buffer.resident = resident;
    buffer.bytes = valueBytes(value);
    buffer.rounded = roundedBytes(value, buffer.bytes);
    buffer.firstStep = resident ? 0 : step;
    buffer.lastStep = resident ? end : step;
    bufferOf.emplace(value, live.buffers.size());
    live.buffers.push_back(buffer);
    live.accessors.emplace_back();
    if (value->producer) live.accessors.back().push_back(value->producer);
  };
  for (const Value* input : graph.inputs()) add(input, 0, true);
  for (size_t step = 0; step < graph.ops().size(); ++step) {
    const Op* op = graph.ops()[step];
    if (internal.count(op->result)) continue;
    if (stepKindOf(*op) == StepKind::View || op->kind == OpKind::Assign) {
      // A view sees its operand's bytes; an assign writes its param's (resident) memory.
      const Value* seen = op->operands[0];
      size_t buffer = bufferOf.at(seen);
      int64_t offset =
          offsetInBuffer[seen] + (op->kind == OpKind::Assign ? 0 : viewByteOffset(*op));
      valueBytes(op->result);  // checked like any value's
      bufferOf.emplace(op->result, buffer);
      offsetInBuffer[op->result] = offset;
      live.views.push_back({op->result, live.buffers[buffer].value, offset});
      continue;
    }
    auto start = kernelStart.find(op->result);
    add(op->result, start == kernelStart.end() ? static_cast<int64_t>(step) : start->second,
        op->kind == OpKind::Param);
  }
  // A read of a value, or of a view of it, keeps its buffer live.
  for (size_t step = 0; step < graph.ops().size(); ++step)
    for (const Value* operand : graph.ops()[step]->operands) {
      if (internal.count(operand)) continue;
      PlannedBuffer& buffer = live.buffers[bufferOf.at(operand)];
      buffer.lastStep = std::max(buffer.lastStep, static_cast<int64_t>(step));
    }
  for (const GraphOutput& output : graph.outputs())
    live.buffers[bufferOf.at(output.value)].lastStep = end;
  // A step reads its inputs when its root runs; a view reads nothing itself.
  for (const KernelStep& step : steps.steps()) {
    if (step.kind == StepKind::Param || step.kind == StepKind::View) continue;
    for (const Value* input : step.inputs) {
      std::vector<const Op*>& accessors = live.accessors[bufferOf.at(input)];
      if (accessors.empty() || accessors.back() != step.root()) accessors.push_back(step.root());
    }
  }
  return live;
}

// How long each activation's bytes stay taken for each stream that writes the device: until
// that stream is ordered after every access of it (plan_memory_streams.h).
void orderAcrossStreams(std::vector<BufferLifetime>& lifetimes,
                        const std::vector<size_t>& activations, const Liveness& live,
                        const StreamOrder& order) {
  std::vector<std::string> writers;  // the device's writing streams, by name
  for (size_t index : activations)
    writers.push_back(order.streamOf(live.buffers[index].value->producer));
  std::sort(writers.begin(), writers.end());
  writers.erase(std::unique(writers.begin(), writers.end()), writers.end());
  for (size_t i = 0; i < activations.size(); ++i) {
    const PlannedBuffer& buffer = live.buffers[activations[i]];
    BufferLifetime& lifetime = lifetimes[i];
    const std::string& writer = order.streamOf(buffer.value->producer);
    lifetime.writer = static_cast<int>(std::lower_bound(writers.begin(), writers.end(), writer) -
                                       writers.begin());
    for (const std::string& stream : writers) {
      int64_t ordered = order.firstOrderedAfter(stream, live.accessors[activations[i]]);
      lifetime.lastFor.push_back(std::max(buffer.lastStep, ordered - 1));
    }
  }
}

// Phase 2 for one device: its activations (of `members`, indices into `all`) packed into its
// arena; its views placed.
DevicePlan packDevice(const Device& device, const std::vector<size_t>& members,
                      const Liveness& live, const StreamOrder& order) {
  DevicePlan plan;
  plan.device = device;
  std::vector<BufferLifetime> lifetimes;
  std::vector<size_t> activations;  // indices into plan.buffers
  std::vector<size_t> activationsInLive;
  int64_t total = 0;
  for (size_t index : members) {
    const PlannedBuffer& buffer = live.buffers[index];
    if (__builtin_add_overflow(total, buffer.rounded, &total))
      modelError({}, "the plan does not fit: {} needs more than {}", device.str(),
                 formatBytes(std::numeric_limits<int64_t>::max()));
    if (buffer.resident) {
      plan.residentBytes += buffer.rounded;
    } else {
      activations.push_back(plan.buffers.size());
      activationsInLive.push_back(index);
      lifetimes.push_back({buffer.firstStep, buffer.lastStep, buffer.rounded, 0, {}});
    }
    plan.buffers.push_back(buffer);
  }
  orderAcrossStreams(lifetimes, activationsInLive, live, order);
  Packing packing = packBuffers(lifetimes);
  for (size_t i = 0; i < activations.size(); ++i)
    plan.buffers[activations[i]].offset = packing.offsets[i];
  plan.arenaBytes = packing.peakBytes;
  plan.peakBytes = plan.residentBytes + plan.arenaBytes;
  std::unordered_map<const Value*, const PlannedBuffer*> bufferOf;
  for (const PlannedBuffer& buffer : plan.buffers) bufferOf[buffer.value] = &buffer;
  for (const PlannedView& view : live.views) {
    auto base = bufferOf.find(view.base);
    if (base == bufferOf.end()) continue;  // another device's
    PlannedView placed = view;
    if (!base->second->resident) placed.offset += base->second->offset;
    plan.views.push_back(placed);
  }
  return plan;
}

// "GiantParameter1 7.5 GiB, GiantParameter2 7.5 GiB, h 24.4 MiB": the largest buffers first.
std::string largestTensors(const DevicePlan& plan, size_t count) {
  std::vector<const PlannedBuffer*> buffers;
  for (const PlannedBuffer& buffer : plan.buffers) buffers.push_back(&buffer);
  std::stable_sort(
      buffers.begin(), buffers.end(),
      [](const PlannedBuffer* a, const PlannedBuffer* b) { return a->bytes > b->bytes; });
  std::string text;
  for (size_t i = 0; i < std::min(count, buffers.size()); ++i)
    text += fmt::format("{}{} {}", i == 0 ? "" : ", ", buffers[i]->value->name,
                        formatBytes(buffers[i]->bytes));
  return text;
}

int64_t memoryOf(const Device& device, const PassContext& context) {
  return context.target.memoryOf(device);  // 0: not limited, or not a device of the run
}

// Phase 3: every device that does not fit, in one line.
void refuseWhatDoesNotFit(const std::vector<DevicePlan>& plans, const PassContext& context) {
  std::string misfits;
  for (const DevicePlan& plan : plans) {
    int64_t capacity = memoryOf(plan.device, context);
    if (capacity <= 0 || plan.peakBytes <= capacity) continue;
    misfits += fmt::format("{}{} needs {}, has {} (largest: {})", misfits.empty() ? "" : "; ",
                           plan.device.str(), formatBytes(plan.peakBytes), formatBytes(capacity),
                           largestTensors(plan, 3));
  }
  if (!misfits.empty()) modelError({}, "the plan does not fit: {}", misfits);
}

}  // namespace

std::vector<DevicePlan> planMemory(const Graph& graph) {
  KernelSteps steps(graph);
  Liveness live = liveness(graph, steps);
  // Devices in order: cpu, then cuda:0, cuda:1, ...
  std::map<std::pair<int, int>, std::vector<size_t>> membersByDevice;
  for (size_t i = 0; i < live.buffers.size(); ++i) {
    const Device& device = live.buffers[i].value->type.device;
    membersByDevice[{static_cast<int>(device.kind), device.index}].push_back(i);
  }
  StreamOrder order(graph, steps);
  std::vector<DevicePlan> plans;
  for (const auto& [key, members] : membersByDevice)
    plans.push_back(
        packDevice(live.buffers[members.front()].value->type.device, members, live, order));
  return plans;
}

bool PlanMemoryPass::run(Graph& graph, const PassContext& context) const {
  std::vector<DevicePlan> plans = planMemory(graph);
  refuseWhatDoesNotFit(plans, context);

  // Phase 4: record. Attributes of devices that no longer hold anything go away.
  bool changed = false;
  std::unordered_map<const Value*, int64_t> offsetOf;
  for (const DevicePlan& plan : plans) {
    std::unordered_set<const Value*> residentValues;
    for (const PlannedBuffer& buffer : plan.buffers) {
      if (buffer.resident)
        residentValues.insert(buffer.value);
      else
        offsetOf[buffer.value] = buffer.offset;
    }
    for (const PlannedView& view : plan.views)
      if (!residentValues.count(view.base)) offsetOf[view.value] = view.offset;
  }
  for (Op* op : graph.ops()) {
    auto planned = offsetOf.find(op->result);
    if (planned == offsetOf.end()) {  // resident, or a kernel's inner value: no arena bytes
      if (op->attrs.has("offset")) {
        op->attrs.erase("offset");
        changed = true;
      }
      continue;
    }
    int64_t offset = planned->second;
    if (op->attrs.has("offset") && op->attrs.getInt("offset", -1) == offset) continue;
    op->attrs.set("offset", offset);
    changed = true;
  }
  Attrs attrs = graph.attrs();
  for (const auto& [name, value] : graph.attrs().all())
    if (name.starts_with("peak_") || name.starts_with("arena_")) attrs.erase(name);
  for (const DevicePlan& plan : plans) {
    attrs.set(peakAttrName(plan.device), plan.peakBytes);
    attrs.set(arenaAttrName(plan.device), plan.arenaBytes);
  }
  if (!(attrs == graph.attrs())) {
    graph.attrs() = std::move(attrs);
    changed = true;
  }
  return changed;
}

}  // namespace gxc
