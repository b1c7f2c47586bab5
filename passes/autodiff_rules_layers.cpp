// Gradient rules of a transformer's layers: gelu, layer_norm, slice (the pieces of a split or
// chunk) and pad, dropout, where (an ONNX export's masks), and scaled_dot_product_attention, whose
// backward recomputes the attention weights from q and k (the forward kernel never stores them), as
// FlashAttention's backward does.
#include <cmath>

#include <fmt/format.h>

#include "ir/infer_type.h"
#include "passes/autodiff_rules.h"

namespace gxc {
namespace {

Value* reduceLast(GradBuilder& b, OpKind kind, Value* x, const std::vector<int64_t>& axes) {
  Attrs attrs;
  attrs.set("axis", axes);
  attrs.set("keepdim", true);
  return b.op(kind, {x}, attrs);
}

// gelu: d/dx x Phi(x) = Phi(x) + x phi(x) (exact); for the tanh form, of
// 0.5 x (1 + tanh(u)) with u = sqrt(2/pi) (x + 0.044715 x^3).
Value* geluGradient(GradBuilder& b, Value* dy) {
  const Op& op = b.forward();
  Value* x = op.operands[0];
  Value* squared = b.op(OpKind::Mul, {x, x});
  Value* slope = nullptr;
  if (op.attrs.getString("approximate", "none") == "tanh") {
    const double k = std::sqrt(2.0 / M_PI), c = 0.044715;
    Value* inner = b.scalarOp(OpKind::Add, b.scalarOp(OpKind::Mul, squared, c), 1.0);
    Value* t = b.op(OpKind::Tanh, {b.scalarOp(OpKind::Mul, b.op(OpKind::Mul, {x, inner}), k)});
    Value* half = b.scalarOp(OpKind::Mul, b.scalarOp(OpKind::Add, t, 1.0), 0.5);
    Value* sech2 =
        b.scalarOp(OpKind::Add, b.scalarOp(OpKind::Mul, b.op(OpKind::Mul, {t, t}), -1.0), 1.0);
    Value* du = b.scalarOp(OpKind::Add, b.scalarOp(OpKind::Mul, squared, 3 * c), 1.0);
    Value* rest = b.op(OpKind::Mul, {b.op(OpKind::Mul, {x, sech2}), du});
    slope = b.op(OpKind::Add, {half, b.scalarOp(OpKind::Mul, rest, 0.5 * k)});
  } else {
    Value* cdf = b.scalarOp(
        OpKind::Mul,
        b.scalarOp(OpKind::Add, b.op(OpKind::Erf, {b.scalarOp(OpKind::Mul, x, M_SQRT1_2)}), 1.0),
        0.5);
    Value* pdf =
        b.scalarOp(OpKind::Mul, b.op(OpKind::Exp, {b.scalarOp(OpKind::Mul, squared, -0.5)}),
                   1.0 / std::sqrt(2.0 * M_PI));
    slope = b.op(OpKind::Add, {cdf, b.op(OpKind::Mul, {x, pdf})});
  }
  return b.op(OpKind::Mul, {dy, slope});
}

// layer_norm over the last m dims, with x^ = (x - mean) rstd: dweight = sum(dy x^) and
// dbias = sum(dy) over the other dims; with g = dy weight,
// dx = rstd (g - mean(g) - x^ mean(g x^)), the means over the normalized dims.
std::vector<Value*> layerNormGradients(GradBuilder& b, Value* dy, const std::vector<bool>& need) {
  const Op& op = b.forward();
  Value* x = op.operands[0];
  int64_t rank = x->type.rank();
  int64_t normalized = 1;
  if (auto given = op.attrs.getAxes("normalized_shape"))
    normalized = static_cast<int64_t>(given->size());
  std::vector<int64_t> axes;
  for (int64_t axis = rank - normalized; axis < rank; ++axis) axes.push_back(axis);
  Value* centered = b.op(OpKind::Sub, {x, reduceLast(b, OpKind::Mean, x, axes)});
  Value* variance = reduceLast(b, OpKind::Mean, b.op(OpKind::Mul, {centered, centered}), axes);
  Value* rstd =
      b.op(OpKind::Rsqrt, {b.scalarOp(OpKind::Add, variance, op.attrs.getFloat("eps", 1e-5))});
  Value* normalizedX = b.op(OpKind::Mul, {centered, rstd});
  std::vector<Value*> grads(op.operands.size(), nullptr);
  bool affine = op.operands.size() > 1;
  if (affine && need[1])
    grads[1] = b.sumToShape(b.op(OpKind::Mul, {dy, normalizedX}), op.operands[1]->type.shape);
  if (op.operands.size() > 2 && need[2]) grads[2] = b.sumToShape(dy, op.operands[2]->type.shape);
  if (!need[0]) return grads;
  Value* g = affine ? b.op(OpKind::Mul, {dy, op.operands[1]}) : dy;
  Value* meanG = reduceLast(b, OpKind::Mean, g, axes);
  Value* meanGx = reduceLast(b, OpKind::Mean, b.op(OpKind::Mul, {g, normalizedX}), axes);
  Value* inner =
      b.op(OpKind::Sub, {b.op(OpKind::Sub, {g, meanG}), b.op(OpKind::Mul, {normalizedX, meanGx})});
  grads[0] = b.op(OpKind::Mul, {inner, rstd});
  return grads;
}

// slice: dy in its place along the axis, zeros elsewhere (a constant pad, as F.pad writes
// pairs: the last dim first).
Value* sliceGradient(GradBuilder& b, Value* dy) {
  const Op& op = b.forward();
  const Shape& shape = op.operands[0]->type.shape;
  int64_t rank = static_cast<int64_t>(shape.size());
  int64_t axis = *normalizeAxis(op.attrs.getInt("axis", 0), rank);
  if (op.attrs.getInt("step", 1) != 1)
    refuseGradient(op, "the gradient of a slice with a step is not built yet");
  int64_t start = op.attrs.getInt("start", 0), end = op.attrs.getInt("end", shape[axis]);
  std::vector<int64_t> pad;
  for (int64_t dim = rank - 1; dim >= axis; --dim) {
    pad.push_back(dim == axis ? start : 0);
    pad.push_back(dim == axis ? shape[axis] - end : 0);
  }
  Attrs attrs;
  attrs.set("pad", pad);
  return b.op(OpKind::Pad, {dy}, attrs);
}

// scaled_dot_product_attention, out = P v with P = softmax(q k^T scale + mask): dv = P^T dout,
// dP = dout v^T, dS = P (dP - rowsum(dP P)), dq = dS k scale, dk = dS^T q scale.
std::vector<Value*> attentionGradients(GradBuilder& b, Value* dy, const std::vector<bool>& need) {
  const Op& op = b.forward();
  // matmul transposes 2-D or batched 3-D operands: more batch dims are flattened into one.
  int64_t rank = op.operands[0]->type.rank();
  auto flat = [&](Value* x) {
    if (rank <= 3) return x;
    Shape shape = x->type.shape;
    int64_t batch = 1;
    for (int64_t dim = 0; dim < rank - 2; ++dim) batch *= shape[dim];
    return b.reshape(x, {batch, shape[rank - 2], shape[rank - 1]});
  };
  Value* q = flat(op.operands[0]);
  Value* k = flat(op.operands[1]);
  Value* v = flat(op.operands[2]);
  dy = flat(dy);
  if (op.operands.size() > 3 && need[3])
    refuseGradient(op, fmt::format("mask '{}' would be trained; freeze it (train: frozen)",
                                   op.operands[3]->name));
  auto matmul = [&](Value* left, Value* right, bool transposeLeft, bool transposeRight) {
    Attrs attrs;
    if (transposeLeft) attrs.set("transpose_a", true);
    if (transposeRight) attrs.set("transpose_b", true);
    return b.op(OpKind::Matmul, {left, right}, attrs);
  };
  double scale =
      op.attrs.getFloat("scale", 1.0 / std::sqrt(static_cast<double>(q->type.shape.back())));
  Value* scores = b.scalarOp(OpKind::Mul, matmul(q, k, false, true), scale);
  auto hide = [&](Value* hidden) {  // -inf where `hidden` (bool) is true
    Attrs attrs;
    attrs.set("value", -INFINITY);
    return b.op(OpKind::MaskedFill, {scores, hidden}, attrs);
  };
  if (op.attrs.getBool("is_causal", false)) {
    // torch's ones(L, S).tril(): built from the scores' shape, then the zeros above hidden.
    Value* ones = b.scalarOp(OpKind::Add, b.scalarOp(OpKind::Mul, scores, 0.0), 1.0);
    scores = hide(b.scalarOp(OpKind::Eq, b.op(OpKind::Tril, {ones}), 0.0));
  } else if (op.operands.size() > 3) {
    Value* mask = op.operands[3];
    if (rank > 3) {  // broadcast to the scores' dims first, then flattened as they are
      Shape full = op.operands[0]->type.shape;
      full.back() = op.operands[1]->type.shape[rank - 2];
      Attrs attrs;
      attrs.set("shape", std::vector<int64_t>(full.begin(), full.end()));
      mask = flat(mask->type.shape == full ? mask : b.op(OpKind::Expand, {mask}, attrs));
    }
    scores = mask->type.dtype == DType::Bool ? hide(b.op(OpKind::LogicalNot, {mask}))
                                             : b.op(OpKind::Add, {scores, mask});
  }
  Attrs lastAxis;
  lastAxis.set("axis", int64_t{-1});
  Value* weights = b.op(OpKind::Softmax, {scores}, lastAxis);
  std::vector<Value*> grads(op.operands.size(), nullptr);
  auto unflat = [&](size_t i, Value* g) { return b.reshape(g, op.operands[i]->type.shape); };
  if (need[2]) grads[2] = unflat(2, matmul(weights, dy, true, false));
  if (!need[0] && !need[1]) return grads;
  Value* dWeights = matmul(dy, v, false, true);
  Value* rowDot = reduceLast(b, OpKind::Sum, b.op(OpKind::Mul, {dWeights, weights}), {-1});
  Value* dScores = b.scalarOp(
      OpKind::Mul, b.op(OpKind::Mul, {weights, b.op(OpKind::Sub, {dWeights, rowDot})}), scale);
  if (need[0]) grads[0] = unflat(0, matmul(dScores, k, false, false));
  if (need[1]) grads[1] = unflat(1, matmul(dScores, q, true, false));
  return grads;
}

// dropout: at inference the identity; in training (train-mode's, with a step count) dy times
// the same mask over 1 - p, which is the same op, seed, step and offset applied to dy.
std::vector<Value*> dropoutGradients(GradBuilder& b, Value* dy) {
  const Op& op = b.forward();
  if (op.operands.size() == 1) return {dy};
  return {b.op(OpKind::Dropout, {dy, op.operands[1]}, op.attrs), nullptr};
}

// pad (constant): the gradient of the padded rows is dropped and that of the cropped ones is
// zero, so dx is dy padded by the opposite amounts (a negative pad crops).
Value* padGradient(GradBuilder& b, Value* dy) {
  const Op& op = b.forward();
  std::string mode = op.attrs.getString("mode", "constant");
  if (mode != "constant")
    refuseGradient(op,
                   fmt::format("the gradient of mode '{}' is not built yet (constant is)", mode));
  std::vector<int64_t> pads = *op.attrs.getIntList("pad");
  for (int64_t& pad : pads) pad = -pad;
  Attrs attrs;
  attrs.set("pad", pads);
  return b.op(OpKind::Pad, {dy}, attrs);
}

// where(cond, a, b), as torch's: dy where cond picks the operand, 0 where it does not (a
// select, so an inf or NaN dy of the other operand's elements gives 0), each summed down to
// its operand's shape. The bool cond has none.
std::vector<Value*> whereGradients(GradBuilder& b, Value* dy, const std::vector<bool>& need) {
  const Op& op = b.forward();
  Value* cond = op.operands[0];
  std::vector<Value*> grads(3, nullptr);
  Attrs zero;
  zero.set("value", 0.0);
  if (need[1])
    grads[1] = b.sumToShape(b.op(OpKind::MaskedFill, {dy, b.op(OpKind::LogicalNot, {cond})}, zero),
                            op.operands[1]->type.shape);
  if (need[2])
    grads[2] = b.sumToShape(b.op(OpKind::MaskedFill, {dy, cond}, zero), op.operands[2]->type.shape);
  return grads;
}

}  // namespace

std::optional<std::vector<Value*>> layerGradients(GradBuilder& builder, Value* dy,
                                                  const std::vector<bool>& needed) {
  switch (builder.forward().kind) {
    case OpKind::Gelu:
      return std::vector<Value*>{geluGradient(builder, dy)};
    case OpKind::LayerNorm:
      return layerNormGradients(builder, dy, needed);
    case OpKind::Slice:
      return std::vector<Value*>{sliceGradient(builder, dy)};
    case OpKind::ScaledDotProductAttention:
      return attentionGradients(builder, dy, needed);
    case OpKind::Dropout:
      return dropoutGradients(builder, dy);
    case OpKind::Where:
      return whereGradients(builder, dy, needed);
    case OpKind::Pad:
      return std::vector<Value*>{padGradient(builder, dy)};
    default:
      return std::nullopt;
  }
}

}  // namespace gxc
