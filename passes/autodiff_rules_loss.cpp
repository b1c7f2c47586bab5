// Gradient rules of the losses and of the ops that end in a normalization over classes:
// mse_loss, cross_entropy, softmax, log_softmax, and embedding and index_select (lookups whose
// gradient is a sum over the rows that chose each class).
#include <fmt/format.h>

#include "ir/infer_type.h"
#include "passes/autodiff_rules.h"

namespace gxc {
namespace {

Value* axisSum(GradBuilder& b, Value* x, int64_t axis, bool keepdim) {
  Attrs attrs;
  attrs.set("axis", std::vector<int64_t>{axis});
  if (keepdim) attrs.set("keepdim", true);
  return b.op(OpKind::Sum, {x}, attrs);
}

// mse_loss: d/dpred of mean((pred - target)^2) is 2 (pred - target) / n.
std::vector<Value*> mseGradients(GradBuilder& b, Value* dy, const std::vector<bool>& need) {
  const Op& op = b.forward();
  Value* pred = op.operands[0];
  Value* target = op.operands[1];
  std::string reduction = op.attrs.getString("reduction", "mean");
  double scale = 2.0;
  if (reduction == "mean") scale /= static_cast<double>(std::max<int64_t>(1, pred->type.numel()));
  Value* diff = b.op(OpKind::Sub, {pred, target});
  Value* dDiff = b.op(OpKind::Mul, {b.scalarOp(OpKind::Mul, diff, scale), dy});
  std::vector<Value*> grads(2, nullptr);
  if (need[0]) grads[0] = b.sumToShape(dDiff, pred->type.shape);
  if (need[1]) grads[1] = b.sumToShape(b.op(OpKind::Neg, {dDiff}), target->type.shape);
  return grads;
}

// cross_entropy over logits [N, C] and class targets [N]: the gradient of the logits is
// (softmax(logits) - one_hot(target)) times each row's weight (its class's `weight`, 0 for
// `ignore_index`), divided by the sum of the weights for the mean reduction.
std::vector<Value*> crossEntropyGradients(GradBuilder& b, Value* dy,
                                          const std::vector<bool>& need) {
  const Op& op = b.forward();
  Value* logits = op.operands[0];
  Value* target = op.operands[1];
  if (logits->type.rank() != 2)
    refuseGradient(op, fmt::format("the gradient over logits {} is not built yet (only [N, C] is)",
                                   logits->type.withoutDevice()));
  if (op.attrs.getFloat("label_smoothing", 0.0) != 0.0)
    refuseGradient(op, "the gradient with label_smoothing is not built yet");
  // A shard's sum of the targets' class weights (the denominator data-parallel and pipeline
  // split a mean into) does not depend on the logits.
  if (op.attrs.getBool("weight_sum", false)) return std::vector<Value*>(op.operands.size());
  if (op.operands.size() > 2 && need[2])
    refuseGradient(op, fmt::format("class weight '{}' would be trained; list it in train: frozen",
                                   op.operands[2]->name));
  DType dtype = logits->type.dtype;
  int64_t classes = logits->type.shape[1];
  int64_t ignored = op.attrs.getInt("ignore_index", -100);
  // Rows whose target is ignore_index count for nothing; their class becomes 0 for one_hot.
  Value* kept = b.scalarOp(OpKind::Ne, target, static_cast<double>(ignored));
  Value* safeTarget = b.op(OpKind::Mul, {target, b.cast(kept, target->type.dtype)});
  Attrs oneHot;
  oneHot.set("num_classes", classes);
  Value* chosen = b.cast(b.op(OpKind::OneHot, {safeTarget}, oneHot), dtype);
  Value* rowWeight = b.cast(kept, dtype);
  if (op.operands.size() > 2)
    rowWeight =
        b.op(OpKind::Mul,
             {rowWeight, axisSum(b, b.op(OpKind::Mul, {chosen, op.operands[2]}), 1, false)});
  std::string reduction = op.attrs.getString("reduction", "mean");
  if (reduction == "mean")
    rowWeight = b.op(OpKind::Div, {rowWeight, b.op(OpKind::Sum, {rowWeight})});
  rowWeight = b.op(OpKind::Mul, {rowWeight, dy});  // dy: 0-d, or [N] for reduction none
  Attrs softmax;
  softmax.set("axis", int64_t{1});
  Value* probabilities = b.op(OpKind::Softmax, {logits}, softmax);
  Attrs column;
  column.set("axis", int64_t{1});
  Value* perRow = b.op(OpKind::Unsqueeze, {rowWeight}, column);
  std::vector<Value*> grads(op.operands.size(), nullptr);
  if (need[0]) grads[0] = b.op(OpKind::Mul, {b.op(OpKind::Sub, {probabilities, chosen}), perRow});
  return grads;
}

int64_t normalizedAxis(const Op& op) {
  return *normalizeAxis(op.attrs.getInt("axis", -1), op.result->type.rank());
}

// softmax: y (dy - sum(dy y)); log_softmax: dy - exp(y) sum(dy), both along the axis.
Value* softmaxGradient(GradBuilder& b, Value* dy) {
  const Op& op = b.forward();
  Value* y = op.result;
  int64_t axis = normalizedAxis(op);
  if (op.kind == OpKind::Softmax) {
    Value* dot = axisSum(b, b.op(OpKind::Mul, {dy, y}), axis, true);
    return b.op(OpKind::Mul, {y, b.op(OpKind::Sub, {dy, dot})});
  }
  Value* total = axisSum(b, dy, axis, true);
  return b.op(OpKind::Sub, {dy, b.op(OpKind::Mul, {b.op(OpKind::Exp, {y}), total})});
}

// embedding: the table's gradient is one_hot(indices)^T dy: row k sums the rows of dy whose
// index is k.
Value* embeddingGradient(GradBuilder& b, Value* dy) {
  const Op& op = b.forward();
  Value* indices = op.operands[0];
  Value* table = op.operands[1];
  int64_t rows = indices->type.numel();
  int64_t width = table->type.shape[1];
  Attrs oneHot;
  oneHot.set("num_classes", table->type.shape[0]);
  Value* flat = b.reshape(b.cast(indices, DType::I64), {rows});
  Value* chosen = b.cast(b.op(OpKind::OneHot, {flat}, oneHot), table->type.dtype);
  Attrs transposeA;
  transposeA.set("transpose_a", true);
  return b.op(OpKind::Matmul, {chosen, b.reshape(dy, {rows, width})}, transposeA);
}

// index_select(x, index) along `axis`: x's gradient is one_hot(index)^T dy with the axis
// first, so that each picked slice's dy adds up where it came from (an index picked twice
// gets both). The integer index has none.
Value* indexSelectGradient(GradBuilder& b, Value* dy) {
  const Op& op = b.forward();
  Value* x = op.operands[0];
  const Shape& shape = x->type.shape;
  int64_t rank = x->type.rank();
  int64_t axis = *normalizeAxis(op.attrs.getInt("axis", 0), rank);
  std::vector<int64_t> perm{axis};  // the axis first, the rest in order
  for (int64_t dim = 0; dim < rank; ++dim)
    if (dim != axis) perm.push_back(dim);
  auto moved = [&](Value* v) {
    if (axis == 0) return v;
    Attrs attrs;
    attrs.set("perm", perm);
    return b.op(OpKind::Transpose, {v}, attrs);
  };
  Value* picked = moved(dy);
  Shape pickedShape = picked->type.shape;
  int64_t count = pickedShape[0];
  int64_t rest = count == 0 ? 0 : picked->type.numel() / count;
  Attrs oneHot;
  oneHot.set("num_classes", shape[axis]);
  Value* flat = b.reshape(b.cast(op.operands[1], DType::I64), {count});
  Value* chosen = b.cast(b.op(OpKind::OneHot, {flat}, oneHot), x->type.dtype);
  Attrs transposeA;
  transposeA.set("transpose_a", true);
  Value* summed =
      b.op(OpKind::Matmul, {chosen, b.reshape(picked, {count, rest})}, transposeA);  // [D, rest]
  pickedShape[0] = shape[axis];
  summed = b.reshape(summed, pickedShape);
  if (axis == 0) return summed;
  std::vector<int64_t> inverse(rank);
  for (int64_t i = 0; i < rank; ++i) inverse[perm[i]] = i;
  Attrs back;
  back.set("perm", inverse);
  return b.op(OpKind::Transpose, {summed}, back);
}

}  // namespace

std::optional<std::vector<Value*>> lossGradients(GradBuilder& builder, Value* dy,
                                                 const std::vector<bool>& needed) {
  const Op& op = builder.forward();
  switch (op.kind) {
    case OpKind::MseLoss:
      return mseGradients(builder, dy, needed);
    case OpKind::CrossEntropy:
      return crossEntropyGradients(builder, dy, needed);
    case OpKind::Softmax:
    case OpKind::LogSoftmax:
      return std::vector<Value*>{softmaxGradient(builder, dy)};
    case OpKind::Embedding:
      return std::vector<Value*>{nullptr, embeddingGradient(builder, dy)};
    case OpKind::IndexSelect:
      return std::vector<Value*>{needed[0] ? indexSelectGradient(builder, dy) : nullptr, nullptr};
    default:
      return std::nullopt;
  }
}

}  // namespace gxc
