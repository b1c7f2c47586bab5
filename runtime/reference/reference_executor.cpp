#include "runtime/reference/reference_executor.h"

#include "runtime/reference/reference_ops.h"

namespace gxc {

void ReferenceExecutor::materializeParams() {
  for (const Op* op : graph_.ops())
    if (op->kind == OpKind::Param) params_.emplace(op->result, materializeParam(*op, weightFiles_));
  paramsReady_ = true;
}

std::map<std::string, Tensor> ReferenceExecutor::paramValues() {
  if (!paramsReady_) materializeParams();
  return paramValuesByName(params_);
}

void ReferenceExecutor::setParamValues(const std::map<std::string, Tensor>& values) {
  if (!paramsReady_) materializeParams();
  overwriteParams(params_, values);
}

std::map<std::string, Tensor> ReferenceExecutor::run(const std::map<std::string, Tensor>& inputs) {
  if (!paramsReady_) materializeParams();
  // A value is dropped after its last reader, so a large model's activations come and go.
  std::map<const Value*, size_t> lastUse;
  const auto& ops = graph_.ops();
  for (size_t i = 0; i < ops.size(); ++i)
    for (const Value* operand : ops[i]->operands) lastUse[operand] = i;
  for (const GraphOutput& output : graph_.outputs()) lastUse[output.value] = ops.size();

  std::map<const Value*, Tensor> live;
  for (const Value* input : graph_.inputs())
    live[input] = boundInput(inputs, input->name, input->type);
  auto tensorOf = [&](const Value* value) -> const Tensor& {
    auto param = params_.find(value);
    return param != params_.end() ? param->second : live.at(value);
  };
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = *ops[i];
    if (op.kind == OpKind::Param) continue;
    std::vector<const Tensor*> operands;
    for (const Value* operand : op.operands) operands.push_back(&tensorOf(operand));
    if (op.kind == OpKind::Assign) {  // the param takes its new value, for the next run
      params_.at(op.operands[0]) = *operands[1];
      live[op.result] = *operands[1];
    } else {
      live[op.result] = evaluateReferenceOp(op, operands);
    }
    for (const Value* operand : op.operands) {
      auto last = lastUse.find(operand);
      if (last != lastUse.end() && last->second == i) live.erase(operand);
    }
    if (!lastUse.count(op.result)) live.erase(op.result);
  }
  std::map<std::string, Tensor> outputs;
  for (const GraphOutput& output : graph_.outputs()) outputs[output.name] = tensorOf(output.value);
  return outputs;
}

}  // namespace gxc
