#include "passes/assign_devices.h"

#include <fmt/ranges.h>

namespace gxc {
namespace {

class Placer {
 public:
  explicit Placer(const PassContext& context) : context_(context) {}

  // The device of the run that `requested` means; `what` and `loc` name the layer in errors.
  Device resolve(const Device& requested, const std::string& what, const SourceLoc& loc) {
    if (!requested.placed()) return context_.devices.front();
    if (requested.isCpu()) return requested;
    int gpus = context_.gpuCount();
    if (gpus == 0) {
      if (context_.strict)
        modelError(loc, "{} is placed on {} but this run has no GPU (--strict refuses the "
                        "fallback to the host)",
                   what, requested.str());
      fellBackToHost_ = true;
      return Device::cpu();
    }
    if (requested.index >= gpus) {
      std::vector<std::string> names;
      for (const Device& device : context_.devices) names.push_back(device.str());
      modelError(loc, "{} is placed on {} but the run's devices are {}", what, requested.str(),
                 fmt::join(names, ", "));
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

}  // namespace

bool AssignDevicesPass::run(Graph& graph, const PassContext& context) const {
  GXC_CHECK(!context.devices.empty(), "a run with no devices");
  Placer placer(context);
  bool changed = false;
  for (Value* input : graph.inputs())
    changed |= setDevice(input, placer.resolve(input->type.device,
                                               fmt::format("input '{}'", input->name), input->loc));
  // Layers first: an unannotated param follows its consumers, so they must be placed.
  for (Op* op : graph.ops()) {
    if (op->kind == OpKind::Param) continue;
    std::string what = fmt::format("layer '{}'", op->layerName());
    changed |= setDevice(op->result, placer.resolve(op->result->type.device, what, op->loc));
  }
  for (Op* op : graph.ops()) {
    if (op->kind != OpKind::Param) continue;
    Device requested = op->result->type.device;
    if (!requested.placed()) {
      std::vector<Op*> users = graph.users(op->result);
      if (!users.empty()) requested = users.front()->device();
    }
    std::string what = fmt::format("param '{}'", op->layerName());
    changed |= setDevice(op->result, placer.resolve(requested, what, op->loc));
  }
  if (placer.fellBackToHost())
    context.emitNote("this run has no GPU: what the model places on cuda runs on the host");
  return changed;
}

}  // namespace gxc
