#include "tools/driver/plan_printer.h"

#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "codegen/cuda_source.h"
#include "ir/kernel_steps.h"
#include "runtime/memory_plan.h"
#include "runtime/schedule.h"

namespace gxc {
namespace {

std::string bytesText(int64_t bytes) {
  return fmt::format("{} byte{}", bytes, bytes == 1 ? "" : "s");
}

// Where a value's bytes are: "arena cuda:0 offset 512, 2048 bytes", "param, 4096 bytes".
std::string whereText(const MemoryPlan& plan, const Value* value) {
  const Placement& placement = plan.placementOf(value);
  std::string inBase = !placement.base || placement.base == value
                           ? ""
                           : fmt::format(" %{} offset {}", placement.base->name, placement.offset);
  switch (placement.storage) {
    case Storage::Arena:
      return fmt::format("arena {} offset {}, {}", placement.device.str(), placement.offset,
                         bytesText(placement.bytes));
    case Storage::Param:
      return fmt::format("param{}, {}", inBase, bytesText(placement.bytes));
    case Storage::Input:
      return fmt::format("input{}, {}", inBase, bytesText(placement.bytes));
    case Storage::Nowhere:
      break;
  }
  return "nowhere";
}

// The names of the step's ops from `first` on: "relu, add".
std::string opNames(const KernelStep& step, size_t first = 0) {
  std::vector<std::string> names;
  for (size_t i = first; i < step.ops.size(); ++i) names.emplace_back(opName(step.ops[i]->kind));
  return fmt::format("{}", fmt::join(names, ", "));
}

// What a step runs: "kernel gxc_relu_1a2b (relu)", "gemm linear, epilogue (relu)", ...
std::string workText(const KernelStep& step, const std::map<const Op*, std::string>& kernels) {
  const Op& root = *step.root();
  std::string group = step.kernelAttr.empty() ? "" : step.kernelAttr + ": ";
  switch (step.kind) {
    case StepKind::Param:
      break;
    case StepKind::Gemm: {
      std::string text = fmt::format("gemm {}", opName(step.first()->kind));
      if (step.ops.size() == 1) return text;
      return fmt::format(
          "{} with epilogue ({}{}): oneDNN's post-ops for f32 on cpu and sim, cuBLASLt's on "
          "cuda where it has them, else kernel {}",
          text, group, opNames(step, 1), kernels.at(&root));
    }
    case StepKind::Copy: {
      const Device& from = root.operands[0]->type.device;
      return fmt::format("copy {} -> {}, {}", from.str(), root.device().str(),
                         bytesText(root.result->type.bytes()));
    }
    case StepKind::Assign:
      return fmt::format("assign {} into param {}", step.root()->operands[1]->name,
                         step.root()->operands[0]->name);
    case StepKind::View:
      return fmt::format("view {} of %{}: no work", opName(root.kind), root.operands[0]->name);
    case StepKind::Generated:
      return fmt::format("kernel {} ({}{})", kernels.at(&root), group, opNames(step));
    case StepKind::Conv: {
      const Op& conv = *step.first();
      std::string text = fmt::format(
          "oneDNN {} on cpu and sim, cuDNN on cuda (kernel {} where cuDNN does not "
          "take it)",
          opName(conv.kind), kernels.at(&conv));
      if (step.ops.size() == 1) return text;
      return fmt::format(
          "{}, with epilogue ({}{}): oneDNN's post-ops for f32 on cpu and sim, "
          "else kernel {}",
          text, group, opNames(step, 1), kernels.at(&root));
    }
  }
  return "";
}

std::string eventsText(const std::vector<int64_t>& events) {
  return fmt::format("{}", fmt::join(events, ", "));
}

}  // namespace

std::string printExecutablePlan(const Graph& graph) {
  Schedule schedule = readSchedule(graph);
  MemoryPlan plan(graph);
  KernelSteps steps(graph);
  std::map<const Op*, std::string> kernels;
  for (const CudaKernel& kernel : generateCudaSource(graph).kernels)
    kernels[kernel.ops.back()] = kernel.name;

  std::string out = fmt::format("plan @{}\n", graph.name());
  for (const auto& [device, arena] : plan.arenas()) {
    out += fmt::format("device {}: arena {}\n", device.str(), bytesText(arena));
    for (const Value* input : graph.inputs())
      if (input->type.device == device)
        out += fmt::format("  input %{}: {}\n", input->name, bytesText(input->type.bytes()));
    for (const Op* param : schedule.params)
      if (param->device() == device)
        out += fmt::format("  param %{}: {}\n", param->result->name,
                           bytesText(param->result->type.bytes()));
  }

  // Each step once, at its root, in issue order; its waits are its first member's.
  std::map<const Op*, size_t> issueIndex;
  for (size_t i = 0; i < schedule.ops.size(); ++i) issueIndex[schedule.ops[i].op] = i;
  for (size_t stream = 0; stream < schedule.streams.size(); ++stream) {
    out += fmt::format("\nstream {}\n", schedule.streams[stream].name);
    for (size_t i = 0; i < schedule.ops.size(); ++i) {
      const ScheduledOp& scheduled = schedule.ops[i];
      if (scheduled.stream != stream) continue;
      const KernelStep* step = steps.stepOfRoot(scheduled.op);
      if (!step) continue;  // an inner member: printed with its kernel
      const ScheduledOp& first = schedule.ops[issueIndex.at(step->first())];
      out +=
          fmt::format("  [{}] %{} = {}\n", i, step->root()->result->name, workText(*step, kernels));
      if (!first.waits.empty()) out += fmt::format("      wait {}\n", eventsText(first.waits));
      for (const Value* input : step->inputs)
        out += fmt::format("      read  %{}: {}\n", input->name, whereText(plan, input));
      out += fmt::format("      {} %{}: {}\n", step->kind == StepKind::View ? "view " : "write",
                         step->root()->result->name, whereText(plan, step->root()->result));
      if (scheduled.record) out += fmt::format("      record {}\n", *scheduled.record);
    }
  }

  out += "\n";
  for (const GraphOutput& output : graph.outputs())
    out += fmt::format("output {} = %{}: {}\n", output.name, output.value->name,
                       whereText(plan, output.value));
  return out;
}

}  // namespace gxc
