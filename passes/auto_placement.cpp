#include "passes/auto_placement.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

#include <fmt/ranges.h>

#include "target/cost_model.h"

namespace gxc {
namespace {

constexpr double kMicro = 1e6;

class AutoPlacer {
 public:
  AutoPlacer(Graph& graph, const PassContext& context) : graph_(graph), context_(context) {
    candidates_ = context.target.deviceList();
    if (std::none_of(candidates_.begin(), candidates_.end(),
                     [](const Device& d) { return d.isCpu(); }))
      candidates_.push_back(Device::cpu());
    for (const TargetDevice& entry : context.target.devices)
      if (int64_t memory = context.target.memoryOf(entry.device); memory > 0)
        capacity_[key(entry.device)] = memory;
    const auto& ops = graph.ops();
    for (size_t i = 0; i < ops.size(); ++i)
      for (const Value* operand : ops[i]->operands) lastUse_[operand] = i;
    for (const GraphOutput& output : graph.outputs()) lastUse_[output.value] = ops.size();
    for (const Value* input : graph.inputs()) {
      finish_[input] = 0;
      charge(input->type.device.placed() ? input->type.device : Device::cpu(), input->type.bytes());
    }
  }

  bool run(std::unordered_map<std::string, std::string>& reasons) {
    bool changed = false;
    const auto& ops = graph_.ops();
    for (size_t i = 0; i < ops.size(); ++i) {
      Op* op = ops[i];
      if (op->kind == OpKind::Param) {
        if (op->device().placed()) chargeParam(op->result, op->device());
        continue;
      }
      Device device;
      std::string reason;  // only --explain shows it: formatting one per op is not free
      if (op->device().placed()) {
        device = op->device();
        reason = "constraint (the model places it)";
      } else {
        device = choose(*op, context_.explain ? &reason : nullptr);
        op->result->type.device = device;
        changed = true;
      }
      commit(*op, device, i);
      if (context_.explain) reasons[op->layerName()] = std::move(reason);
    }
    return changed;
  }

 private:
  static bool isFreeParam(const Value* value) {
    return value->producer && value->producer->kind == OpKind::Param &&
           !value->type.device.placed();
  }

  int64_t& used(const Device& device) { return used_[key(device)]; }
  void charge(const Device& device, int64_t bytes) { used(device) += bytes; }
  void chargeParam(const Value* param, const Device& device) {
    if (paramsOn_[key(device)].insert(param).second) charge(device, param->type.bytes());
  }

  // Bytes placing `op` on `device` adds there: params not yet resident, and its result.
  int64_t addedBytes(const Op& op, const Device& device) {
    int64_t bytes = op.result->type.bytes();
    for (const Value* operand : op.operands)
      if (isFreeParam(operand) && !paramsOn_[key(device)].count(operand))
        bytes += operand->type.bytes();
    return bytes;
  }

  int64_t freeBytes(const Device& device) {
    auto it = capacity_.find(key(device));
    if (it == capacity_.end()) return std::numeric_limits<int64_t>::max();
    return it->second - used(device);
  }

  // When `op` would finish on `device`, in seconds from the start.
  double finishOn(const Op& op, const Device& device) {
    double ready = 0;
    for (const Value* operand : op.operands) {
      if (isFreeParam(operand)) continue;  // replicated: resident wherever it is read
      const Device& from = placeOf(operand);
      double arrival = finish_[operand];
      if (from != device)
        arrival += simCopySeconds(copyDirection(from, device), operand->type.bytes(),
                                  HostMemory::Pageable, context_.target.costs);
      ready = std::max(ready, arrival);
    }
    return std::max(ready, busyUntil_[key(device)]) +
           simOpSeconds(op, device, context_.target.costs);
  }

  const Device& placeOf(const Value* value) {
    static const Device host = Device::cpu();
    return value->type.device.placed() ? value->type.device : host;
  }

  Device choose(const Op& op, std::string* reason) {
    const Device* best = nullptr;
    const Device* roomiest = nullptr;
    double bestFinish = std::numeric_limits<double>::infinity(), secondFinish = bestFinish;
    std::vector<std::string> full;
    for (const Device& device : candidates_) {
      if (!roomiest || freeBytes(device) > freeBytes(*roomiest)) roomiest = &device;
      if (addedBytes(op, device) > freeBytes(device)) {
        full.push_back(device.str());
        continue;
      }
      double finish = finishOn(op, device);
      if (finish < bestFinish) {
        secondFinish = bestFinish;
        bestFinish = finish;
        best = &device;
      } else {
        secondFinish = std::min(secondFinish, finish);
      }
    }
    if (!best) {
      if (reason)
        *reason = fmt::format("memory: fits on no device; {} has the most free", roomiest->str());
      return *roomiest;
    }
    if (!reason) return *best;
    *reason = fmt::format("cost: finishes first there, at {:.1f} us", bestFinish * kMicro);
    if (secondFinish < std::numeric_limits<double>::infinity())
      *reason += fmt::format(" (next best {:.1f} us)", secondFinish * kMicro);
    if (!full.empty()) *reason += fmt::format("; memory rules out {}", fmt::join(full, ", "));
    return *best;
  }

  void commit(const Op& op, const Device& device, size_t index) {
    for (const Value* operand : op.operands)
      if (isFreeParam(operand)) chargeParam(operand, device);
    charge(device, op.result->type.bytes());
    finish_[op.result] = finishOn(op, device);
    busyUntil_[key(device)] = finish_[op.result];
    // Activations whose last reader this is are freed where they live.
    for (const Value* operand : op.operands) {
      bool activation = !operand->producer || operand->producer->kind != OpKind::Param;
      if (activation && lastUse_[operand] == index)
        charge(placeOf(operand), -operand->type.bytes());
    }
  }

  Graph& graph_;
  const PassContext& context_;
  std::vector<Device> candidates_;
  // By device, keyed without building its name: these are read several times per op.
  using DeviceKey = std::pair<Device::Kind, int>;
  static DeviceKey key(const Device& device) { return {device.kind, device.index}; }
  std::map<DeviceKey, int64_t> capacity_, used_;
  std::map<DeviceKey, double> busyUntil_;
  std::map<DeviceKey, std::set<const Value*>> paramsOn_;
  std::unordered_map<const Value*, double> finish_;
  std::unordered_map<const Value*, size_t> lastUse_;
};

}  // namespace

bool placeAutomatically(Graph& graph, const PassContext& context,
                        std::unordered_map<std::string, std::string>& reasons) {
  return AutoPlacer(graph, context).run(reasons);
}

}  // namespace gxc
