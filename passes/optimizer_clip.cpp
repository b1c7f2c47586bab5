#include "passes/optimizer_clip.h"

#include <cmath>

#include "passes/autodiff_rules.h"

namespace gxc {
namespace {

// torch.linalg.vector_norm(g, p) of one gradient, as a 0-d value.
Value* norm(GradBuilder& b, Value* g, double p) {
  if (std::isinf(p)) {
    std::vector<int64_t> axes;
    for (int64_t i = 0; i < static_cast<int64_t>(g->type.shape.size()); ++i) axes.push_back(i);
    Value* magnitude = b.op(OpKind::Abs, {g});
    if (axes.empty()) return magnitude;
    Attrs attrs;
    attrs.set("axis", axes);
    return b.reshape(b.op(OpKind::Max, {magnitude}, attrs), {});
  }
  if (p == 2) return b.op(OpKind::Sqrt, {b.sumToShape(b.op(OpKind::Mul, {g, g}), {})});
  if (p == 1) return b.sumToShape(b.op(OpKind::Abs, {g}), {});
  Value* powered = b.scalarOp(OpKind::Pow, b.op(OpKind::Abs, {g}), p);
  return b.scalarOp(OpKind::Pow, b.sumToShape(powered, {}), 1.0 / p);
}

}  // namespace

void clipGradNorm(Graph& graph, std::vector<std::pair<Value*, Value*>>& updates) {
  double maxNorm = graph.attrs().getFloat("clip_grad_max_norm", 0);
  double p = graph.attrs().getFloat("clip_grad_norm_type", 2);
  if (!(maxNorm > 0) || !std::isfinite(maxNorm) || !(p > 0))
    throw Error(ErrorKind::Model, {},
                "train: clip_grad_norm: max_norm must be > 0 and norm_type > 0 or inf");
  const Op& first = *updates.front().first->producer;
  GradBuilder b(graph, first, "update", "clip_grad_norm");
  DType dtype = updates.front().second->type.dtype;
  // total_norm = vector_norm(stack(per-param norms), p): the per-param norms first, as torch.
  Value* total = nullptr;
  for (auto& [param, gradient] : updates) {
    GradBuilder own(graph, *param->producer, "update", "clip_grad_norm." + param->name);
    Value* n = b.cast(norm(own, gradient, p), dtype);
    Value* term = std::isinf(p) || p == 1 ? n
                  : p == 2                ? b.op(OpKind::Mul, {n, n})
                                          : b.scalarOp(OpKind::Pow, n, p);
    total = !total ? term : b.op(std::isinf(p) ? OpKind::Maximum : OpKind::Add, {total, term});
  }
  if (p == 2)
    total = b.op(OpKind::Sqrt, {total});
  else if (!std::isinf(p) && p != 1)
    total = b.scalarOp(OpKind::Pow, total, 1.0 / p);
  // clip_coef = max_norm / (total_norm + 1e-6), clamped to at most 1 (torch multiplies even
  // when it is 1, which changes nothing).
  Value* coefficient = b.scalarOp(
      OpKind::Mul, b.op(OpKind::Reciprocal, {b.scalarOp(OpKind::Add, total, 1e-6)}), maxNorm);
  coefficient = b.scalarOp(OpKind::Minimum, coefficient, 1.0);
  for (auto& [param, gradient] : updates) {
    GradBuilder own(graph, *param->producer, "update", "clip_grad_norm." + param->name);
    gradient = own.op(OpKind::Mul, {gradient, own.cast(coefficient, gradient->type.dtype)});
  }
}

}  // namespace gxc
