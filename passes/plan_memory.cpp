#include "passes/plan_memory.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "ir/fused_kernel.h"
#include "passes/plan_memory_packing.h"
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

// Phase 1: every buffer of the graph with its lifetime; `resident` marks params and inputs.
// A fused kernel's inner values have none; its root's buffer is live from the kernel's first
// step, since the kernel writes it while it reads every operand of every member.
std::vector<PlannedBuffer> liveness(const Graph& graph, std::vector<bool>& resident) {
  const auto end = static_cast<int64_t>(graph.ops().size());  // the step after the last op
  std::unordered_set<const Value*> internal = kernelInternalValues(graph);
  std::unordered_map<const Value*, int64_t> kernelStart;
  for (const KernelSpan& span : kernelSpans(graph))
    kernelStart[graph.ops()[span.last]->result] = static_cast<int64_t>(span.first);
  std::vector<PlannedBuffer> buffers;
  std::unordered_map<const Value*, size_t> bufferOf;
  auto add = [&](const Value* value, int64_t step, bool isResident) {
    PlannedBuffer buffer;
    buffer.value = value;
    buffer.bytes = valueBytes(value);
    buffer.rounded = roundedBytes(value, buffer.bytes);
    buffer.firstStep = isResident ? 0 : step;
    buffer.lastStep = isResident ? end : step;
    bufferOf.emplace(value, buffers.size());
    buffers.push_back(buffer);
    resident.push_back(isResident);
  };
  for (const Value* input : graph.inputs()) add(input, 0, true);
  for (size_t step = 0; step < graph.ops().size(); ++step) {
    const Op* op = graph.ops()[step];
    if (internal.count(op->result)) continue;
    auto start = kernelStart.find(op->result);
    add(op->result, start == kernelStart.end() ? static_cast<int64_t>(step) : start->second,
        op->kind == OpKind::Param);
  }
  for (size_t step = 0; step < graph.ops().size(); ++step)
    for (const Value* operand : graph.ops()[step]->operands) {
      if (internal.count(operand)) continue;
      PlannedBuffer& buffer = buffers[bufferOf.at(operand)];
      buffer.lastStep = std::max(buffer.lastStep, static_cast<int64_t>(step));
    }
  for (const GraphOutput& output : graph.outputs())
    buffers[bufferOf.at(output.value)].lastStep = end;
  return buffers;
}

// Phase 2 for one device: its buffers (indices into `all`) packed into its arena.
DevicePlan packDevice(const Device& device, const std::vector<size_t>& members,
                      const std::vector<PlannedBuffer>& all, const std::vector<bool>& resident) {
  DevicePlan plan;
  plan.device = device;
  std::vector<BufferLifetime> lifetimes;
  int64_t total = 0;
  for (size_t index : members) {
    const PlannedBuffer& buffer = all[index];
    if (__builtin_add_overflow(total, buffer.rounded, &total))
      modelError({}, "the plan does not fit: {} needs more than {}", device.str(),
                 formatBytes(std::numeric_limits<int64_t>::max()));
    lifetimes.push_back({buffer.firstStep, buffer.lastStep, buffer.rounded, resident[index]});
    plan.buffers.push_back(buffer);
  }
  Packing packing = packBuffers(lifetimes);
  for (size_t i = 0; i < plan.buffers.size(); ++i) plan.buffers[i].offset = packing.offsets[i];
  plan.peakBytes = packing.peakBytes;
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

std::string peakAttrName(const Device& device) {
  std::string name = "peak_" + device.str();
  name.erase(std::remove(name.begin(), name.end(), ':'), name.end());
  return name;
}

std::vector<DevicePlan> planMemory(const Graph& graph) {
  std::vector<bool> resident;
  std::vector<PlannedBuffer> buffers = liveness(graph, resident);
  // Devices in order: cpu, then cuda:0, cuda:1, ...
  std::map<std::pair<int, int>, std::vector<size_t>> membersByDevice;
  for (size_t i = 0; i < buffers.size(); ++i) {
    const Device& device = buffers[i].value->type.device;
    membersByDevice[{static_cast<int>(device.kind), device.index}].push_back(i);
  }
  std::vector<DevicePlan> plans;
  for (const auto& [key, members] : membersByDevice)
    plans.push_back(
        packDevice(buffers[members.front()].value->type.device, members, buffers, resident));
  return plans;
}

bool PlanMemoryPass::run(Graph& graph, const PassContext& context) const {
  std::vector<DevicePlan> plans = planMemory(graph);
  refuseWhatDoesNotFit(plans, context);

  // Phase 4: record. Peaks of devices that no longer hold anything go away.
  bool changed = false;
  std::unordered_map<const Value*, int64_t> offsetOf;
  for (const DevicePlan& plan : plans)
    for (const PlannedBuffer& buffer : plan.buffers) offsetOf[buffer.value] = buffer.offset;
  for (Op* op : graph.ops()) {
    auto planned = offsetOf.find(op->result);
    if (planned == offsetOf.end()) {  // a kernel's inner value: no memory
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
    if (name.starts_with("peak_")) attrs.erase(name);
  for (const DevicePlan& plan : plans) attrs.set(peakAttrName(plan.device), plan.peakBytes);
  if (!(attrs == graph.attrs())) {
    graph.attrs() = std::move(attrs);
    changed = true;
  }
  return changed;
}

}  // namespace gxc
