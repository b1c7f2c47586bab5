#include "runtime/host_executor.h"

#include <chrono>

#include <unistd.h>

#include "ir/fused_kernel.h"
#include "runtime/cpu_gemm.h"
#include "runtime/reference_ops.h"

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
    for (const Value* operand : ops[i]->operands) lastUse_[operand] = i;
  }
  kernelInner_ = kernelInternalValues(graph);
  for (const KernelSpan& span : kernelSpans(graph))
    kernelResultAt_[span.first] = ops[span.last]->result;
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
  auto counted = [&](const Value* value, const Tensor& tensor) {
    return kernelInner_.count(value) ? int64_t{0} : static_cast<int64_t>(tensor.nbytes());
  };
  std::unordered_set<const Value*> reserved;  // kernel results counted since their first member
  auto track = [&](const Value* value, Tensor tensor) {
    if (!reserved.count(value)) liveBytes += counted(value, tensor);
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
    if (auto kernel = kernelResultAt_.find(i); kernel != kernelResultAt_.end()) {
      reserved.insert(kernel->second);
      liveBytes += kernel->second->type.bytes();
      peakBytes = std::max(peakBytes, liveBytes);
    }
    std::vector<const Tensor*> operands;
    for (const Value* operand : op.operands) {
      auto param = params_.find(operand);
      operands.push_back(param != params_.end() ? &param->second : &live.at(operand));
    }
    bool blas = kernels_ == HostKernels::Cpu;
    Tensor result = blas && op.kind == OpKind::Matmul   ? cpuMatmul(op, operands)
                    : blas && op.kind == OpKind::Linear ? cpuLinear(op, operands)
                                                        : evaluateReferenceOp(op, operands);
    track(op.result, std::move(result));
    // Free what this op used last, and its own result when nothing ever reads it.
    std::vector<const Value*> dying(op.operands.begin(), op.operands.end());
    dying.push_back(op.result);
    for (const Value* value : dying) {
      auto it = live.find(value);
      auto last = lastUse_.find(value);
      bool dead = last == lastUse_.end() || last->second == i;
      if (it != live.end() && dead) {
        liveBytes -= counted(value, it->second);
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

}  // namespace gxc
