#include "passes/autodiff_rules.h"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "ir/infer_type.h"

namespace gxc {

Value* GradBuilder::op(OpKind kind, std::vector<Value*> operands, Attrs attrs,
                       const std::string& base) {
  const Value* differentiated = forward_.result;
  std::string name = graph_.uniqueName(fmt::format("{}.{}", prefix_,
                                                   !base.empty()    ? base
                                                   : !name_.empty() ? name_
                                                                    : differentiated->name));
  TensorType placeholder = operands.at(0)->type;
  placeholder.device = differentiated->type.device;
  Op* appended =
      graph_.appendOp(kind, std::move(operands), name, placeholder, std::move(attrs), forward_.loc);
  appended->result->type = inferResultType(*appended);
  return appended->result;
}

Value* GradBuilder::scalarOp(OpKind kind, Value* a, double scalar) {
  Attrs attrs;
  attrs.set("scalar", scalar);
  return op(kind, {a}, attrs);
}

Value* GradBuilder::cast(Value* x, DType dtype) {
  if (x->type.dtype == dtype) return x;
  Attrs attrs;
  attrs.set("dtype", std::string(dtypeName(dtype)));
  return op(OpKind::Cast, {x}, attrs);
}

Value* GradBuilder::reshape(Value* x, const Shape& shape) {
  if (x->type.shape == shape) return x;
  Attrs attrs;
  attrs.set("shape", std::vector<int64_t>(shape.begin(), shape.end()));
  return op(OpKind::Reshape, {x}, attrs);
}

Value* GradBuilder::sumToShape(Value* g, const Shape& shape) {
  const Shape& from = g->type.shape;
  if (from == shape) return g;
  int64_t extra = static_cast<int64_t>(from.size()) - static_cast<int64_t>(shape.size());
  std::vector<int64_t> axes;
  for (int64_t i = 0; i < static_cast<int64_t>(from.size()); ++i)
    if (i < extra || (shape[i - extra] == 1 && from[i] != 1)) axes.push_back(i);
  Value* summed = g;
  if (!axes.empty()) {
    Attrs attrs;
    attrs.set("axis", axes);
    summed = op(OpKind::Sum, {g}, attrs);
  }
  return reshape(summed, shape);
}

Value* GradBuilder::expandFrom(Value* g, const Shape& shape, const std::vector<int64_t>& axes) {
  Shape kept = shape;
  for (int64_t axis : axes) kept[axis] = 1;
  Value* withOnes = reshape(g, kept);
  if (kept == shape) return withOnes;
  Attrs attrs;
  attrs.set("shape", std::vector<int64_t>(shape.begin(), shape.end()));
  return op(OpKind::Expand, {withOnes}, attrs);
}

Value* addTrainingParam(Graph& graph, const std::string& name, const TensorType& type, Attrs attrs,
                        const SourceLoc& loc) {
  attrs.set("name", name);
  Op* first = graph.ops().empty() ? nullptr : graph.ops().front();
  return graph
      .insertOpBefore(first, OpKind::Param, {}, graph.uniqueName(name), type, std::move(attrs), loc)
      ->result;
}

std::vector<int64_t> reductionAxes(const Op& op, int64_t rank) {
  std::vector<int64_t> axes;
  std::optional<std::vector<int64_t>> given = op.attrs.getAxes("axis");
  if (!given) {
    axes.resize(rank);
    std::iota(axes.begin(), axes.end(), 0);
    return axes;
  }
  for (int64_t axis : *given) axes.push_back(*normalizeAxis(axis, rank));
  std::sort(axes.begin(), axes.end());
  return axes;
}

void refuseGradient(const Op& op, const std::string& what) {
  throw Error(ErrorKind::Model, op.loc,
              fmt::format("layer '{}': cannot train through {}: {}", op.layerName(),
                          opName(op.kind), what));
}

namespace {

[[noreturn]] void noRule(const Op& op, const std::string& what) {
  refuseGradient(op, what +
                         "; freeze the params before it (train: frozen) or leave the layer "
                         "out of the loss");
}

bool hasScalar(const Op& op) { return op.operands.size() == 1 && op.attrs.has("scalar"); }

// add sub mul div, and their forms with `scalar`.
std::vector<Value*> arithmeticGradients(GradBuilder& b, Value* dy, const std::vector<bool>& need) {
  const Op& op = b.forward();
  std::vector<Value*> grads(op.operands.size(), nullptr);
  Value* x = op.operands[0];
  if (hasScalar(op)) {
    double scalar = op.attrs.getFloat("scalar", 0);
    if (op.kind == OpKind::Add || op.kind == OpKind::Sub) grads[0] = dy;
    if (op.kind == OpKind::Mul) grads[0] = b.scalarOp(OpKind::Mul, dy, scalar);
    if (op.kind == OpKind::Div) grads[0] = b.scalarOp(OpKind::Div, dy, scalar);
    return grads;
  }
  Value* y = op.operands[1];
  Value* dx = nullptr;
  Value* dOther = nullptr;
  switch (op.kind) {
    case OpKind::Add:
      dx = dy;
      dOther = need[1] ? dy : nullptr;
      break;
    case OpKind::Sub:
      dx = dy;
      dOther = need[1] ? b.op(OpKind::Neg, {dy}) : nullptr;
      break;
    case OpKind::Mul:
      dx = need[0] ? b.op(OpKind::Mul, {dy, y}) : nullptr;
      dOther = need[1] ? b.op(OpKind::Mul, {dy, x}) : nullptr;
      break;
    default:  // div: d(x/y)/dy = -(x/y)/y
      dx = need[0] ? b.op(OpKind::Div, {dy, y}) : nullptr;
      dOther = need[1]
                   ? b.op(OpKind::Neg, {b.op(OpKind::Div, {b.op(OpKind::Mul, {dy, op.result}), y})})
                   : nullptr;
  }
  if (need[0]) grads[0] = b.sumToShape(dx, x->type.shape);
  if (need[1]) grads[1] = b.sumToShape(dOther, y->type.shape);
  return grads;
}

// relu sigmoid tanh exp log neg sqrt: dy times the derivative, from x or from the result.
Value* unaryGradient(GradBuilder& b, Value* dy) {
  const Op& op = b.forward();
  Value* x = op.operands[0];
  Value* y = op.result;
  switch (op.kind) {
    case OpKind::Neg:
      return b.op(OpKind::Neg, {dy});
    case OpKind::Relu:  // torch's threshold_backward: where the result is positive
      return b.op(OpKind::Mul, {dy, b.cast(b.scalarOp(OpKind::Gt, y, 0.0), y->type.dtype)});
    case OpKind::Sigmoid: {  // y (1 - y)
      Value* oneMinus = b.scalarOp(OpKind::Add, b.op(OpKind::Neg, {y}), 1.0);
      return b.op(OpKind::Mul, {dy, b.op(OpKind::Mul, {y, oneMinus})});
    }
    case OpKind::Tanh: {  // 1 - y^2
      Value* square = b.op(OpKind::Mul, {y, y});
      return b.op(OpKind::Mul, {dy, b.scalarOp(OpKind::Add, b.op(OpKind::Neg, {square}), 1.0)});
    }
    case OpKind::Exp:
      return b.op(OpKind::Mul, {dy, y});
    case OpKind::Log:
      return b.op(OpKind::Div, {dy, x});
    case OpKind::Sqrt:  // 1 / (2 sqrt(x))
      return b.op(OpKind::Div, {b.scalarOp(OpKind::Mul, dy, 0.5), y});
    default:
      noRule(op, "its gradient rule is not built yet");
  }
}

// clamp: torch.clamp's backward passes dy where min <= x <= max (both ends included) and
// gives 0 elsewhere, NaN x included; a select, not a product, so an inf or NaN dy outside
// gives 0 too.
Value* clampGradient(GradBuilder& b, Value* dy) {
  const Op& op = b.forward();
  Value* x = op.operands[0];
  Value* inside = nullptr;
  if (op.attrs.has("min")) inside = b.scalarOp(OpKind::Ge, x, op.attrs.getFloat("min", 0));
  if (op.attrs.has("max")) {
    Value* below = b.scalarOp(OpKind::Le, x, op.attrs.getFloat("max", 0));
    inside = inside ? b.op(OpKind::LogicalAnd, {inside, below}) : below;
  }
  if (!inside) return dy;  // no bounds: the identity
  Attrs zero;
  zero.set("value", 0.0);
  return b.op(OpKind::MaskedFill, {dy, b.op(OpKind::LogicalNot, {inside})}, zero);
}

// linear: y = x W^T + b over the last dim of x.
std::vector<Value*> linearGradients(GradBuilder& b, Value* dy, const std::vector<bool>& need) {
  const Op& op = b.forward();
  Value* x = op.operands[0];
  Value* weight = op.operands[1];
  std::vector<Value*> grads(op.operands.size(), nullptr);
  if (need[0]) grads[0] = b.op(OpKind::Matmul, {dy, weight});
  int64_t in = x->type.shape.back();
  int64_t out = dy->type.shape.back();
  int64_t rows = x->type.numel() / std::max<int64_t>(in, 1);
  Value* dy2 = b.reshape(dy, {rows, out});
  if (need[1]) {
    Attrs attrs;
    attrs.set("transpose_a", true);
    grads[1] = b.op(OpKind::Matmul, {dy2, b.reshape(x, {rows, in})}, attrs);
  }
  if (op.operands.size() > 2 && need[2]) {
    Attrs attrs;
    attrs.set("axis", std::vector<int64_t>{0});
    grads[2] = b.op(OpKind::Sum, {dy2}, attrs);
  }
  return grads;
}

// matmul of 2-D operands, of 3-D or more with the same batch dims (flattened into one), or of
// 3-D or more by a 2-D (x W: x's leading dims flattened into rows); either maybe transposed.
std::vector<Value*> matmulGradients(GradBuilder& b, Value* dy, const std::vector<bool>& need) {
  const Op& op = b.forward();
  Value* a = op.operands[0];
  Value* m = op.operands[1];
  bool ta = op.attrs.getBool("transpose_a", false);
  bool tb = op.attrs.getBool("transpose_b", false);
  const Shape& as = a->type.shape;
  const Shape& ms = m->type.shape;
  int64_t rank = a->type.rank();
  auto lastTwo = [](const Shape& shape, int64_t lead) {
    return Shape{lead, shape[shape.size() - 2], shape[shape.size() - 1]};
  };
  if (rank >= 3 && m->type.rank() == 2 && !ta) {
    int64_t rows = a->type.numel() / as.back();
    a = b.reshape(a, {rows, as.back()});
    dy = b.reshape(dy, {rows, dy->type.shape.back()});
  } else if (rank >= 3 && m->type.rank() == rank &&
             std::equal(as.begin(), as.end() - 2, ms.begin())) {
    int64_t batch = 1;
    for (int64_t dim = 0; dim < rank - 2; ++dim) batch *= as[dim];
    a = b.reshape(a, lastTwo(as, batch));
    m = b.reshape(m, lastTwo(ms, batch));
    dy = b.reshape(dy, lastTwo(dy->type.shape, batch));
  } else if (rank != 2 || m->type.rank() != 2) {
    noRule(op, fmt::format("the gradient of a matmul of {} and {} is not built yet (2-D, 3-D or "
                           "more with equal batch dims, or either of those by a 2-D, is)",
                           op.operands[0]->type.withoutDevice(), m->type.withoutDevice()));
  }
  auto matmul = [&](Value* left, Value* right, bool transposeLeft, bool transposeRight) {
    Attrs attrs;
    if (transposeLeft) attrs.set("transpose_a", true);
    if (transposeRight) attrs.set("transpose_b", true);
    return b.op(OpKind::Matmul, {left, right}, attrs);
  };
  std::vector<Value*> grads(2, nullptr);
  // With A = op(a) and B = op(m): dA = dy B^T and dB = A^T dy; a transposed operand takes
  // the transpose of its product.
  if (need[0]) grads[0] = b.reshape(ta ? matmul(m, dy, tb, true) : matmul(dy, m, false, !tb), as);
  if (need[1]) grads[1] = b.reshape(tb ? matmul(dy, a, true, ta) : matmul(a, dy, !ta, false), ms);
  return grads;
}

// sum and mean: the gradient spread back over the reduced dims.
Value* reductionGradient(GradBuilder& b, Value* dy) {
  const Op& op = b.forward();
  const Shape& shape = op.operands[0]->type.shape;
  std::vector<int64_t> axes = reductionAxes(op, static_cast<int64_t>(shape.size()));
  Value* spread = b.expandFrom(dy, shape, axes);
  if (op.kind == OpKind::Sum) return spread;
  int64_t count = 1;
  for (int64_t axis : axes) count *= shape[axis];
  return b.scalarOp(OpKind::Mul, spread, 1.0 / static_cast<double>(std::max<int64_t>(count, 1)));
}

Value* transposeGradient(GradBuilder& b, Value* dy) {
  const Op& op = b.forward();
  int64_t rank = op.operands[0]->type.rank();
  std::vector<int64_t> perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  std::reverse(perm.begin(), perm.end());
  if (auto given = op.attrs.getIntList("perm"))
    for (int64_t i = 0; i < rank; ++i) perm[i] = *normalizeAxis((*given)[i], rank);
  std::vector<int64_t> inverse(rank);
  for (int64_t i = 0; i < rank; ++i) inverse[perm[i]] = i;
  Attrs attrs;
  attrs.set("perm", inverse);
  return b.op(OpKind::Transpose, {dy}, attrs);
}

// to: the gradient moves back to the operand's device, by an explicit `to` (as the placement
// passes write them) named after the operand and that device: grad.VALUE.cudaN.
Value* toGradient(GradBuilder& b, Value* dy) {
  const Value* source = b.forward().operands[0];
  const Device& device = source->type.device;
  if (!device.placed() || device == dy->type.device) return dy;
  std::string suffix = device.str();
  suffix.erase(std::remove(suffix.begin(), suffix.end(), ':'), suffix.end());
  Attrs attrs;
  attrs.set("device", device.str());
  Value* moved = b.op(OpKind::To, {dy}, attrs, source->name + "." + suffix);
  moved->type.device = device;
  return moved;
}

// concat: each operand's part of the gradient, sliced back out along the axis.
std::vector<Value*> concatGradients(GradBuilder& b, Value* dy, const std::vector<bool>& need) {
  const Op& op = b.forward();
  int64_t axis = *normalizeAxis(op.attrs.getInt("axis", 0), dy->type.rank());
  std::vector<Value*> grads(op.operands.size(), nullptr);
  int64_t start = 0;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    int64_t size = op.operands[i]->type.shape[axis];
    if (need[i]) {
      Attrs attrs;
      attrs.set("axis", axis);
      attrs.set("start", start);
      attrs.set("end", start + size);
      grads[i] = b.op(OpKind::Slice, {dy}, attrs);
    }
    start += size;
  }
  return grads;
}

}  // namespace

std::vector<Value*> gradientsOf(GradBuilder& builder, Value* dy, const std::vector<bool>& needed) {
  const Op& op = builder.forward();
  if (auto loss = lossGradients(builder, dy, needed)) return *loss;
  if (auto layer = layerGradients(builder, dy, needed)) return *layer;
  if (auto conv = convGradients(builder, dy, needed)) return *conv;
  if (auto norm = normGradients(builder, dy, needed)) return *norm;
  switch (op.kind) {
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
    case OpKind::Div:
      return arithmeticGradients(builder, dy, needed);
    case OpKind::Linear:
      return linearGradients(builder, dy, needed);
    case OpKind::Matmul:
      return matmulGradients(builder, dy, needed);
    case OpKind::Sum:
    case OpKind::Mean:
      return {reductionGradient(builder, dy)};
    case OpKind::Reshape:
    case OpKind::Flatten:
    case OpKind::Squeeze:
    case OpKind::Unsqueeze:
      return {builder.reshape(dy, op.operands[0]->type.shape)};
    case OpKind::Transpose:
      return {transposeGradient(builder, dy)};
    case OpKind::Concat:
      return concatGradients(builder, dy, needed);
    case OpKind::Clamp:
      return {clampGradient(builder, dy)};
    case OpKind::To:  // the gradient goes back where the operand came from
      return {toGradient(builder, dy)};
    case OpKind::Cast:  // float to float: the gradient in the operand's dtype
      if (!isFloat(op.operands[0]->type.dtype)) return {nullptr};
      return {builder.cast(dy, op.operands[0]->type.dtype)};
    default:
      // unaryGradient has the elementwise unary rules, and refuses the others.
      if (isElementwiseUnary(op.kind)) return {unaryGradient(builder, dy)};
      noRule(op, "its gradient rule is not built yet");
  }
}

}  // namespace gxc
