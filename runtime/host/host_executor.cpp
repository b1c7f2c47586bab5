#include "runtime/host/host_executor.h"

#include <chrono>

#include <unistd.h>

#include "runtime/reference/reference_ops.h"

namespace gxc {

HostExecutor::HostExecutor(const Graph& graph, HostKernels kernels)
    : graph_(graph), kernels_(kernels) {
  for (const Value* input : graph.inputs())
    if (!input->type.device.isCpu())
      runtimeError(input->loc, "input '{}' is on {}, but this run executes on the host only",
                   input->name, input->type.device.str());
  const auto& ops = graph.ops();
  for (size_t i = 0; i < ops.size(); ++i) {
    if (!ops[i]->device().isCpu())
      runtimeError(ops[i]->loc, "layer '{}' is on {}, but this run executes on the host only",
                   ops[i]->layerName(), ops[i]->device().str());
  }
  if (kernels_ == HostKernels::Cpu) generated_ = std::make_unique<HostGeneratedKernels>(graph);
  // A value dies after the last step that reads it: a fused kernel reads its inputs when its
  // root runs.
  for (size_t i = 0; i < ops.size(); ++i)
    for (const Value* operand : ops[i]->operands) lastUse_[operand] = i;
  if (generated_) {
    std::map<const Op*, size_t> index;
    for (size_t i = 0; i < ops.size(); ++i) index[ops[i]] = i;
    for (const KernelStep& step : generated_->steps().steps())
      for (const Value* input : step.inputs) lastUse_[input] = index.at(step.root());
  }
  // Outputs live to the end.
  for (const GraphOutput& output : graph.outputs()) lastUse_[output.value] = ops.size();
}

void HostExecutor::materializeParams() {
  // Refuse up front what cannot fit: past physical memory the kernel's OOM killer, not a
  // catchable bad_alloc, would end the run.
  int64_t needed = 0;
  for (const Op* op : graph_.ops())
    if (op->kind == OpKind::Param) needed += op->result->type.bytes();
  int64_t available = static_cast<int64_t>(sysconf(_SC_AVPHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
  if (available > 0 && needed > available)
    runtimeError({}, "the model's params need {:.1f} GiB on the host, which has {:.1f} GiB free",
                 static_cast<double>(needed) / (1ull << 30),
                 static_cast<double>(available) / (1ull << 30));
  for (const Op* op : graph_.ops()) {
    if (op->kind != OpKind::Param) continue;
    Tensor value = materializeParam(*op, weightFiles_);
    paramBytes_ += static_cast<int64_t>(value.nbytes());
    params_.emplace(op->result, std::move(value));
  }
  paramsReady_ = true;
}

std::map<std::string, Tensor> HostExecutor::run(const std::map<std::string, Tensor>& inputs,
                                                HostRunStats* stats) {
  if (!paramsReady_) materializeParams();
  auto start = std::chrono::steady_clock::now();
  std::map<const Value*, Tensor> live;
  int64_t liveBytes = 0, peakBytes = 0;
  auto track = [&](const Value* value, Tensor tensor) {
    liveBytes += static_cast<int64_t>(tensor.nbytes());
    peakBytes = std::max(peakBytes, liveBytes);
    live[value] = std::move(tensor);
  };
  for (const Value* input : graph_.inputs()) {
    track(input, boundInput(inputs, input->name, input->type));
  }
  const auto& ops = graph_.ops();
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = *ops[i];
    if (op.kind == OpKind::Param) continue;
    // With generated kernels, a fused kernel runs at its root, reading the kernel's inputs.
    const KernelStep* step = generated_ ? generated_->steps().stepOfRoot(&op) : nullptr;
    if (generated_ && !step) continue;  // an internal member: computed by its root's kernel
    std::vector<const Value*> reads =
        step ? step->inputs : std::vector<const Value*>(op.operands.begin(), op.operands.end());
    std::vector<const Tensor*> operands;
    for (const Value* operand : reads) {
      auto param = params_.find(operand);
      operands.push_back(param != params_.end() ? &param->second : &live.at(operand));
    }
    Tensor result = step ? generated_->run(*step, operands) : evaluateReferenceOp(op, operands);
    track(op.result, std::move(result));
    // Free what this step used last, and its own result when nothing ever reads it.
    std::vector<const Value*> dying = reads;
    dying.push_back(op.result);
    for (const Value* value : dying) {
      auto it = live.find(value);
      auto last = lastUse_.find(value);
      bool dead = last == lastUse_.end() || last->second == i;
      if (it != live.end() && dead) {
        liveBytes -= static_cast<int64_t>(it->second.nbytes());
        live.erase(it);
      }
    }
  }
  std::map<std::string, Tensor> outputs;
  for (const GraphOutput& output : graph_.outputs()) {
    auto param = params_.find(output.value);
    outputs[output.name] = param != params_.end() ? param->second : live.at(output.value);
  }
  if (stats) {
    std::chrono::duration<double, std::milli> elapsed = std::chrono::steady_clock::now() - start;
    stats->milliseconds = elapsed.count();
    stats->residentBytes = paramBytes_;
    stats->peakBytes = paramBytes_ + peakBytes;
  }
  return outputs;
}

KernelCacheStats HostExecutor::kernelCacheStats() const {
  return generated_ ? generated_->cacheStats() : KernelCacheStats{};
}

}  // namespace gxc
