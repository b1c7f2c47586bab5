#include "ir/kernel_steps.h"

#include <algorithm>
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
  // Views of the steps' own kernelAttr strings: steps_ is reserved, so they never move.
  std::unordered_set<std::string_view> kernelNames;
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
    const size_t index = steps_.size();
    for (size_t k = i; k < end; ++k) stepIndex_[ops[k]] = index;
    // Most steps have a few members and read a few values, which a scan of the lists finds
    // faster than a hashed lookup does (the step index is as large as the graph); past 16 (a
    // kernel may have 100,000 members) the hashed ones take over.
    constexpr size_t kScanned = 16;
    auto isMember = [&](const Op* producer) {
      if (step.ops.size() <= kScanned)
        return std::find(step.ops.begin(), step.ops.end(), producer) != step.ops.end();
      auto writer = stepIndex_.find(producer);
      return writer != stepIndex_.end() && writer->second == index;
    };
    std::unordered_set<const Value*> inputSet;
    for (const Op* op : step.ops) {
      GXC_CHECK(op->device() == step.first()->device(),
                "kernel {}: member '{}' is on {}, not on {} with the others", step.kernelAttr,
                op->layerName(), op->device().str(), step.first()->device().str());
      for (const Value* operand : op->operands) {
        if (operand->producer && isMember(operand->producer)) continue;
        bool known =
            step.inputs.size() <= kScanned
                ? std::find(step.inputs.begin(), step.inputs.end(), operand) != step.inputs.end()
                : !inputSet.insert(operand).second;
        if (known) continue;
        step.inputs.push_back(operand);
        if (step.inputs.size() == kScanned + 1)
          inputSet.insert(step.inputs.begin(), step.inputs.end());
      }
    }
    steps_.push_back(std::move(step));
    const std::string& name = steps_.back().kernelAttr;
    GXC_CHECK(name.empty() || kernelNames.insert(name).second,
              "kernel {}: its members are not contiguous (again at '{}')", name,
              steps_.back().first()->layerName());
    i = end;
  }
  // Only the root is read outside its kernel.
  for (const Op* op : ops) {
    const KernelStep& reader = steps_[stepIndexOf(op)];
    for (const Value* operand : op->operands) {
      if (!operand->producer || operand->producer->kind == OpKind::Param) continue;
      const KernelStep& writer = steps_[stepIndexOf(operand->producer)];
      GXC_CHECK(&writer == &reader || operand->producer == writer.root(),
                "kernel {}: internal value '{}' is read by '{}' outside the kernel",
                writer.kernelAttr, operand->name, op->layerName());
    }
  }
  for (const GraphOutput& output : graph.outputs()) {
    const Op* producer = output.value->producer;
    if (producer)
      GXC_CHECK(producer == steps_[stepIndexOf(producer)].root(),
                "kernel {}: internal value '{}' is a graph output",
                steps_[stepIndexOf(producer)].kernelAttr, output.value->name);
  }
}

size_t KernelSteps::stepIndexOf(const Op* op) const {
  auto it = stepIndex_.find(op);
  GXC_CHECK(it != stepIndex_.end(), "op '{}' is not in the graph of these steps", op->layerName());
  return it->second;
}

const KernelStep* KernelSteps::stepOfRoot(const Op* op) const {
  const KernelStep& step = stepOf(op);
  return step.root() == op ? &step : nullptr;
}

const KernelStep& KernelSteps::stepOf(const Op* op) const { return steps_[stepIndexOf(op)]; }

}  // namespace gxc
