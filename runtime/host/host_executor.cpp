#include "runtime/host/host_executor.h"

#include <chrono>
#include <set>

#include <unistd.h>

namespace gxc {
namespace {

const Graph& onTheHost(const Graph& graph) {
  for (const Value* input : graph.inputs())
    if (!input->type.device.isCpu())
      runtimeError(input->loc, "input '{}' is on {}, but this run executes on the host only",
                   input->name, input->type.device.str());
  for (const Op* op : graph.ops())
    if (!op->device().isCpu())
      runtimeError(op->loc, "layer '{}' is on {}, but this run executes on the host only",
                   op->layerName(), op->device().str());
  return graph;
}

// Refuses up front what cannot fit: past physical memory the kernel's OOM killer, not a
// catchable bad_alloc, would end the run.
void checkHostMemory(int64_t needed, const char* what) {
  int64_t available = static_cast<int64_t>(sysconf(_SC_AVPHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
  if (available > 0 && needed > available)
    runtimeError({}, "the model's {} need {:.1f} GiB on the host, which has {:.1f} GiB free", what,
                 static_cast<double>(needed) / (1ull << 30),
                 static_cast<double>(available) / (1ull << 30));
}

HostArena hostArena(const MemoryPlan& plan) {
  int64_t bytes = plan.arenaBytes(Device::cpu());
  checkHostMemory(bytes, "activations");
  return HostArena(bytes);
}

// The params no step writes (an Assign step writes its param's bytes): they keep their values
// from one run to the next, so their packed copies stay good.
std::set<const Value*> paramsNoStepWrites(const Graph& graph, const KernelSteps& steps,
                                          const MemoryPlan& plan) {
  std::set<const Value*> constant;
  for (const Op* op : graph.ops())
    if (op->kind == OpKind::Param) constant.insert(op->result);
  for (const KernelStep& step : steps.steps())
    if (step.kind == StepKind::Assign) constant.erase(plan.placementOf(step.root()->result).base);
  return constant;
}

}  // namespace

HostExecutor::HostExecutor(const Graph& graph, HostLaunchMode launch)
    : graph_(onTheHost(graph)),
      plan_(graph),
      generated_(graph, KernelCache::fromEnvironment(), launch),
      arena_(hostArena(plan_)),
      constant_(paramsNoStepWrites(graph_, generated_.steps(), plan_)) {}

void HostExecutor::materializeParams() {
  int64_t needed = 0;
  for (const Op* op : graph_.ops())
    if (op->kind == OpKind::Param) needed += op->result->type.bytes();
  checkHostMemory(needed, "params");
  for (const Op* op : graph_.ops()) {
    if (op->kind != OpKind::Param) continue;
    Tensor value = materializeParam(*op, weightFiles_);
    paramBytes_ += static_cast<int64_t>(value.nbytes());
    params_.emplace(op->result, std::move(value));
  }
  paramsReady_ = true;
  bindSteps();
}

void HostExecutor::bindSteps() {
  static const InputViews kNoInputs;
  bound_.clear();
  for (const KernelStep& step : generated_.steps().steps()) {
    // A param is materialized, a view is its operand's bytes: neither runs.
    if (step.kind == StepKind::Param || step.kind == StepKind::View) continue;
    BoundStep& bound = bound_.emplace_back();
    bound.step = &step;
    for (const Value* input : step.inputs) {
      const Placement& placement = plan_.placementOf(input);
      if (placement.storage == Storage::Input) {
        bound.fromInputs.push_back({bound.operands.size(), placement.base, placement.offset});
        bound.operands.emplace_back();  // made at each run
      } else {
        bound.operands.push_back(viewOf(input, kNoInputs));
      }
    }
    const Value* result = step.root()->result;
    if (step.kind == StepKind::Assign) {  // the param's new value, into its own memory
      Tensor& param = params_.at(plan_.placementOf(result).base);
      bound.result = {param.dtype(), param.shape(), param.data()};
    } else {
      bound.result = arena_.view(result, plan_.placementOf(result).offset);
    }
  }
}

std::map<std::string, Tensor> HostExecutor::paramValues() {
  if (!paramsReady_) materializeParams();
  return paramValuesByName(params_);
}

void HostExecutor::setParamValues(const std::map<std::string, Tensor>& values) {
  if (!paramsReady_) materializeParams();
  overwriteParams(params_, values);
  constant_.forgetPacked();
}

ConstTensorView HostExecutor::viewOf(const Value* value, const InputViews& inputs) const {
  const Placement& placement = plan_.placementOf(value);
  const std::byte* base = nullptr;
  switch (placement.storage) {
    case Storage::Arena:
      return arena_.view(value, placement.offset);
    case Storage::Param:
      base = params_.at(placement.base).data();
      break;
    case Storage::Input:
      base = boundInput(inputs, placement.base->name, placement.base->type).data();
      break;
    case Storage::Nowhere:
      GXC_CHECK(false, "'{}', a fused kernel's inner value, is read outside it", value->name);
  }
  return {value->type.dtype, value->type.shape,
          placement.bytes == 0 ? nullptr : base + placement.offset};
}

std::map<std::string, Tensor> HostExecutor::run(const std::map<std::string, Tensor>& inputs,
                                                HostRunStats* stats) {
  InputViews views;
  for (const auto& [name, tensor] : inputs) views.emplace(name, tensor.view());
  return run(views, stats);
}

std::map<std::string, Tensor> HostExecutor::run(const InputViews& inputs, HostRunStats* stats) {
  if (!paramsReady_) materializeParams();
  auto start = std::chrono::steady_clock::now();
  std::map<const Value*, const std::byte*> inputBytes;  // each input looked up once a run
  for (BoundStep& bound : bound_) {
    for (const BoundStep::InputOperand& from : bound.fromInputs) {
      auto [it, fresh] = inputBytes.try_emplace(from.input, nullptr);
      if (fresh) it->second = boundInput(inputs, from.input->name, from.input->type).data();
      const TensorType& type = bound.step->inputs[from.operand]->type;
      bound.operands[from.operand] = {type.dtype, type.shape, it->second + from.offset};
    }
    if (interrupted_ && interrupted_()) throw RunInterrupted();
    // An assignment only copies its param's new value in: it has no weights to pack.
    generated_.run(*bound.step, bound.operands, bound.result,
                   bound.step->kind == StepKind::Assign ? nullptr : &constant_);
  }
  std::map<std::string, Tensor> outputs;
  for (const GraphOutput& output : graph_.outputs())
    outputs[output.name] = Tensor(viewOf(output.value, inputs));
  if (stats) {
    std::chrono::duration<double, std::milli> elapsed = std::chrono::steady_clock::now() - start;
    stats->milliseconds = elapsed.count();
    stats->residentBytes = paramBytes_ + constant_.packedBytes();
    stats->arenaBytes = arena_.bytes();
    int64_t inputBytes = 0;
    for (const Value* input : graph_.inputs()) inputBytes += input->type.bytes();
    stats->peakBytes = stats->residentBytes + inputBytes + arena_.bytes();
  }
  return outputs;
}

}  // namespace gxc
