#include "passes/assign_devices.h"

#include "passes/auto_placement.h"
#include "passes/run_capacity.h"

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>

#include <fmt/ranges.h>

namespace gxc {
namespace {

class Placer {
 public:
  explicit Placer(const PassContext& context) : context_(context) {}

  // The device of the run that `requested` means; `kind` and `name` ("layer", "h") and `loc`
  // name the layer in errors (formatted only then: this runs once per op).
  Device resolve(const Device& requested, std::string_view kind, const std::string& name,
                 const SourceLoc& loc) {
    if (!requested.placed()) return context_.target.devices.front().device;
    if (requested.isCpu()) return requested;
    int gpus = context_.target.gpuCount();
    if (gpus == 0) {
      if (context_.strict)
        modelError(loc,
                   "{} '{}' is placed on {} but this run has no GPU (--strict refuses the "
                   "fallback to the host)",
                   kind, name, requested.str());
      fellBackToHost_ = true;
      return Device::cpu();
    }
    if (requested.index >= gpus) {
      std::vector<std::string> names;
      for (const TargetDevice& entry : context_.target.devices) names.push_back(entry.device.str());
      modelError(loc, "{} '{}' is placed on {} but the run's devices are {}", kind, name,
                 requested.str(), fmt::join(names, ", "));
    }
    return requested;
  }

  bool fellBackToHost() const { return fellBackToHost_; }

 private:
  const PassContext& context_;
  bool fellBackToHost_ = false;
};

bool setDevice(Value* value, const Device& device) {
  if (value->type.device == device) return false;
  value->type.device = device;
  return true;
}

// Places an unannotated param with its first consumer (or on `fallback` when it has none) and
// gives every other device that consumes it a replica of its own, named NAME.cudaN, right
// after it (each new replica before the one made before it). `users` are its readers.
bool replicatePerConsumerDevice(Graph& graph, Op* param, const std::vector<Op*>& users,
                                const Device& fallback) {
  bool changed = setDevice(param->result, users.empty() ? fallback : users.front()->device());
  std::map<std::string, Value*> replicas;  // by device
  for (Op* user : users) {
    const Device& device = user->device();
    if (device == param->result->type.device) continue;
    Value*& replica = replicas[device.str()];
    if (!replica) {
      std::string suffix = device.str();
      suffix.erase(std::remove(suffix.begin(), suffix.end(), ':'), suffix.end());
      TensorType type = param->result->type;
      type.device = device;
      Op* after = graph.nextOp(param);
      replica = graph
                    .insertOpBefore(after, OpKind::Param, {},
                                    graph.uniqueName(param->layerName() + "." + suffix), type,
                                    param->attrs, param->loc)
                    ->result;
    }
    for (Value*& operand : user->operands)
      if (operand == param->result) operand = replica;
    changed = true;
  }
  return changed;
}

// Device follows data (model-format.md 1.1): an unannotated layer that reads the result of a
// `to`, or of a layer placed this way, runs where the `to` moved it (the first such operand's
// device), as the layers after x.cuda(0) run on cuda:0 in PyTorch. Returns whether anything
// changed; `reasons` gets each such layer's, for --explain.
bool followMovedData(Graph& graph, std::unordered_map<std::string, std::string>& reasons) {
  std::unordered_map<const Value*, std::pair<Device, const Op*>> moved;  // device, its `to`
  bool changed = false;
  for (Op* op : graph.ops()) {
    if (op->kind == OpKind::To) {
      std::optional<Device> device = parseDevice(op->attrs.getString("device", ""));
      if (device) moved.emplace(op->result, std::make_pair(*device, op));
      continue;
    }
    if (op->kind == OpKind::Param || op->device().placed()) continue;
    auto found = std::find_if(op->operands.begin(), op->operands.end(),
                              [&](const Value* operand) { return moved.count(operand) != 0; });
    if (found == op->operands.end()) continue;
    auto [device, to] = moved.at(*found);
    op->result->type.device = device;
    moved.emplace(op->result, std::make_pair(device, to));
    reasons[op->layerName()] =
        fmt::format("device follows data: it reads what '{}' moved there", to->layerName());
    changed = true;
  }
  return changed;
}

}  // namespace

bool AssignDevicesPass::run(Graph& graph, const PassContext& context) const {
  GXC_CHECK(!context.target.devices.empty(), "a run with no devices");
  // Memory before devices: params that no placement can hold are the real problem, and
  // resolving the model's annotations first would report a missing device instead.
  refuseParamsBeyondRunMemory(graph, context);
  Placer placer(context);
  bool changed = false;
  std::unordered_map<std::string, std::string> reasons;  // by layer, for --explain
  changed |= followMovedData(graph, reasons);
  if (context.placement == "auto") changed |= placeAutomatically(graph, context, reasons);
  // Only --explain reads the reasons: a map of every layer name is not free at 100,000 layers.
  if (context.explain)
    for (const Op* op : graph.ops()) {
      if (op->kind == OpKind::Param || reasons.count(op->layerName())) continue;
      std::string& reason = reasons[op->layerName()];
      if (!op->device().placed())
        reason = "the run's first device";
      else if (context.placement != "pipeline")
        reason = "constraint (the model places it)";
      else if (op->kind == OpKind::Slice && op->device().isCpu())
        reason = "a micro-batch of an input, cut on the host";
      else
        reason = "its pipeline stage";
    }
  for (Value* input : graph.inputs())
    changed |=
        setDevice(input, placer.resolve(input->type.device, "input", input->name, input->loc));
  // Layers first: an unannotated param follows its consumers, so they must be placed.
  for (Op* op : graph.ops()) {
    if (op->kind == OpKind::Param) continue;
    changed |= setDevice(
        op->result, placer.resolve(op->result->type.device, "layer", op->layerName(), op->loc));
  }
  // Params: an annotated one stays where the model put it (insert-copies brings it to other
  // consumers); an unannotated one is placed with its first consumer and replicated once per
  // further device that consumes it, as DataParallel replicates a module's weights.
  std::vector<Op*> params;
  for (Op* op : graph.ops())
    if (op->kind == OpKind::Param) params.push_back(op);
  // Replicas change no reader of another param, so one map serves them all (built only when
  // some param is free: a graph of layers alone needs none).
  bool anyFree = std::any_of(params.begin(), params.end(),
                             [](const Op* param) { return !param->result->type.device.placed(); });
  const auto usersByValue =
      anyFree ? graph.usersByValue() : std::unordered_map<const Value*, std::vector<Op*>>{};
  static const std::vector<Op*> kNoUsers;
  for (Op* param : params) {
    const std::string& name = param->layerName();
    if (param->result->type.device.placed()) {
      changed |= setDevice(param->result,
                           placer.resolve(param->result->type.device, "param", name, param->loc));
      continue;
    }
    auto users = usersByValue.find(param->result);
    const std::vector<Op*>& readers = users == usersByValue.end() ? kNoUsers : users->second;
    Device fallback = placer.resolve({}, "param", name, param->loc);
    auto assign = std::find_if(readers.begin(), readers.end(),
                               [](const Op* user) { return user->kind == OpKind::Assign; });
    if (assign == readers.end()) {
      changed |= replicatePerConsumerDevice(graph, param, readers, fallback);
      continue;
    }
    // A param a training step updates in place is one buffer: no replicas (they would keep
    // the old values); it lives with its first reader, and insert-copies brings it to the
    // others, and the new value to it.
    auto reader = std::find_if(readers.begin(), readers.end(),
                               [](const Op* user) { return user->kind != OpKind::Assign; });
    changed |= setDevice(param->result, reader == readers.end() ? fallback : (*reader)->device());
  }
  // An update runs where its param lives.
  for (Op* op : graph.ops())
    if (op->kind == OpKind::Assign) changed |= setDevice(op->result, op->operands[0]->type.device);
  if (placer.fellBackToHost() && !context.hostFallbackNoted)
    context.emitNote("this run has no GPU: what the model places on cuda runs on the host");
  // data-parallel explained the model's layers as it split them; the rest are its means.
  if (context.explain && !graph.attrs().has("data_parallel"))
    for (const Op* op : graph.ops())
      if (op->kind != OpKind::Param)
        context.explain(fmt::format("layer '{}' -> {}: {}", op->layerName(), op->device().str(),
                                    reasons[op->layerName()]));
  return changed;
}

}  // namespace gxc
