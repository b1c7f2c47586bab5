#include "ir/kernel_steps.h"

#include <algorithm>
#include <set>
#include <unordered_set>

#include "ir/diagnostic.h"

namespace gxc {

bool isGemm(OpKind kind) { return kind == OpKind::Matmul || kind == OpKind::Linear; }

StepKind stepKindOf(const Op& op) {
  switch (op.kind) {
    case OpKind::Param:
      return StepKind::Param;
    case OpKind::Matmul:
    case OpKind::Linear:
      return StepKind::Gemm;
    case OpKind::Conv2d:
    case OpKind::ConvTranspose2d:
      return StepKind::Conv;
    case OpKind::Copy:
    case OpKind::To:
      return StepKind::Copy;
    case OpKind::Assign:
      return StepKind::Assign;
    case OpKind::Reshape:
    case OpKind::Squeeze:
    case OpKind::Unsqueeze:
    case OpKind::Flatten:
      return StepKind::View;
    case OpKind::Dropout:  // the identity at inference (its operand's bytes); a mask in training
      return op.operands.size() == 1 ? StepKind::View : StepKind::Generated;
    case OpKind::Slice:
      // Along axis 0 and with step 1 a slice is one contiguous range of its operand's bytes.
      return (op.attrs.getInt("axis", 0) == 0 ||
              op.attrs.getInt("axis", 0) == -op.operands[0]->type.rank()) &&
                     op.attrs.getInt("step", 1) == 1
                 ? StepKind::View
                 : StepKind::Generated;
    default:
      return StepKind::Generated;
  }
}

int64_t viewByteOffset(const Op& view) {
  GXC_CHECK(stepKindOf(view) == StepKind::View, "'{}' is not a view", view.layerName());
  if (view.kind != OpKind::Slice) return 0;
  const TensorType& input = view.operands[0]->type;
  int64_t rows = std::max<int64_t>(1, input.shape.at(0));
  return view.attrs.getInt("start", 0) * (input.bytes() / rows);
}

KernelSteps::KernelSteps(const Graph& graph) {
  const auto& ops = graph.ops();
  std::set<std::string> kernelNames;
  steps_.reserve(ops.size());
  stepIndex_.reserve(ops.size());
  for (size_t i = 0; i < ops.size();) {
    KernelStep step;
    step.kernelAttr = ops[i]->attrs.getStringOrEmpty("kernel");
    size_t end = i + 1;
    if (!step.kernelAttr.empty())
      while (end < ops.size() && ops[end]->attrs.getStringOrEmpty("kernel") == step.kernelAttr)
        ++end;
    step.ops.assign(ops.begin() + static_cast<std::ptrdiff_t>(i),
                    ops.begin() + static_cast<std::ptrdiff_t>(end));
    step.kind = stepKindOf(*step.first());
    if (step.ops.size() == 1) {  // most steps: no member sets to build
      for (const Value* operand : step.first()->operands)
        if (std::find(step.inputs.begin(), step.inputs.end(), operand) == step.inputs.end())
          step.inputs.push_back(operand);
    } else {
      // Sets, not searches of the lists: a kernel may have 100,000 members.
      std::unordered_set<const Op*> members(step.ops.begin(), step.ops.end());
      std::unordered_set<const Value*> inputs;
      for (const Op* op : step.ops) {
        GXC_CHECK(op->device() == step.first()->device(),
                  "kernel {}: member '{}' is on {}, not on {} with the others", step.kernelAttr,
                  op->layerName(), op->device().str(), step.first()->device().str());
        for (const Value* operand : op->operands) {
          bool internal = operand->producer && members.count(operand->producer);
          if (!internal && inputs.insert(operand).second) step.inputs.push_back(operand);
        }
      }
    }
    GXC_CHECK(step.kernelAttr.empty() || kernelNames.insert(step.kernelAttr).second,
              "kernel {}: its members are not contiguous (again at '{}')", step.kernelAttr,
              step.first()->layerName());
    for (size_t k = i; k < end; ++k) stepIndex_[ops[k]] = steps_.size();
    steps_.push_back(std::move(step));
    i = end;
  }
  // Only the root is read outside its kernel.
  for (const Op* op : ops) {
    const KernelStep& reader = steps_[stepIndex_.at(op)];
    for (const Value* operand : op->operands) {
      if (!operand->producer || operand->producer->kind == OpKind::Param) continue;
      const KernelStep& writer = steps_[stepIndex_.at(operand->producer)];
      GXC_CHECK(&writer == &reader || operand->producer == writer.root(),
                "kernel {}: internal value '{}' is read by '{}' outside the kernel",
                writer.kernelAttr, operand->name, op->layerName());
    }
  }
  for (const GraphOutput& output : graph.outputs()) {
    const Op* producer = output.value->producer;
    if (producer)
      GXC_CHECK(producer == steps_[stepIndex_.at(producer)].root(),
                "kernel {}: internal value '{}' is a graph output",
                steps_[stepIndex_.at(producer)].kernelAttr, output.value->name);
  }
}

const KernelStep* KernelSteps::stepOfRoot(const Op* op) const {
  const KernelStep& step = stepOf(op);
  return step.root() == op ? &step : nullptr;
}

const KernelStep& KernelSteps::stepOf(const Op* op) const {
  auto it = stepIndex_.find(op);
  GXC_CHECK(it != stepIndex_.end(), "op '{}' is not in the graph of these steps", op->layerName());
  return steps_[it->second];
}

}  // namespace gxc
