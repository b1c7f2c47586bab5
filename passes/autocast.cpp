#include "passes/autocast.h"

#include <unordered_map>

#include <fmt/format.h>

#include "ir/infer_type.h"

namespace gxc {
namespace {

bool runsInLowPrecision(OpKind kind) {
  return kind == OpKind::Linear || kind == OpKind::Matmul || kind == OpKind::Conv2d ||
         kind == OpKind::ConvTranspose2d;
}

// A cast of `x` to `dtype`, inserted before `anchor`, at its layer and on its device.
Value* castBefore(Graph& graph, Op* anchor, Value* x, DType dtype, const std::string& name,
                  const SourceLoc& loc) {
  Attrs attrs;
  attrs.set("dtype", std::string(dtypeName(dtype)));
  TensorType type = x->type;
  type.dtype = dtype;
  return graph.insertOpBefore(anchor, OpKind::Cast, {x}, graph.uniqueName(name), type, attrs, loc)
      ->result;
}

}  // namespace

bool AutocastPass::run(Graph& graph, const PassContext&) const {
  if (!graph.attrs().has("autocast")) return false;
  std::string dtype = graph.attrs().getString("autocast", "");
  if (dtype != "bf16")
    throw Error(
        ErrorKind::Model, {},
        fmt::format("train: autocast '{}' is not supported (bf16 is; f16 is not yet)", dtype));
  // Each layer's bf16 result, and the f32 cast of it that its readers get instead.
  std::unordered_map<Value*, Value*> widened;
  for (Op* op : std::vector<Op*>(graph.ops())) {
    if (!runsInLowPrecision(op->kind) || op->result->type.dtype != DType::F32) continue;
    const std::string& layer = op->layerName();
    for (Value*& operand : op->operands)
      if (operand->type.dtype == DType::F32)
        operand = castBefore(graph, op, operand, DType::BF16, layer + ".autocast", op->loc);
    op->result->type = inferResultType(*op);
    widened[op->result] =
        castBefore(graph, graph.nextOp(op), op->result, DType::F32, layer + ".f32", op->loc);
  }
  if (widened.empty()) return false;
  for (Op* op : graph.ops()) {
    if (op->kind == OpKind::Cast && op->operands.size() == 1 && widened.count(op->operands[0]) &&
        widened.at(op->operands[0]) == op->result)
      continue;  // the widening cast itself
    for (Value*& operand : op->operands)
      if (auto found = widened.find(operand); found != widened.end()) operand = found->second;
  }
  for (size_t i = 0; i < graph.outputs().size(); ++i)
    if (auto found = widened.find(graph.outputs()[i].value); found != widened.end())
      graph.setOutputValue(i, found->second);
  return true;
}

}  // namespace gxc
