#include "passes/optimizer_accumulate.h"

#include "passes/autodiff_rules.h"

namespace gxc {

Value* accumulateGradients(Graph& graph, std::vector<std::pair<Value*, Value*>>& updates) {
  int64_t micro = graph.attrs().getInt("accumulate", 1);
  const Op& first = *updates.front().first->producer;
  TensorType scalar = updates.front().first->type;
  scalar.shape = {};
  Attrs applyAttrs;
  applyAttrs.set("init", std::string("ones"));  // a step as it is, until the driver says
  applyAttrs.set("seed", int64_t{0});
  applyAttrs.set("role", std::string("optimizer_state"));
  Value* apply = addTrainingParam(graph, "optimizer.apply", scalar, applyAttrs, first.loc);
  GradBuilder b(graph, first, "update", "optimizer.apply");
  Value* applied = b.scalarOp(OpKind::Gt, apply, 0.5);
  // What the buffers keep: everything but on the step (1 - apply: 1 or 0 exactly).
  Value* kept = b.scalarOp(OpKind::Add, b.op(OpKind::Neg, {apply}), 1.0);
  for (auto& [param, gradient] : updates) {
    GradBuilder own(graph, *param->producer, "update", param->name + ".grad_accum");
    Attrs attrs;
    attrs.set("init", std::string("zeros"));
    attrs.set("seed", int64_t{0});
    attrs.set("role", std::string("optimizer_state"));
    Value* buffer = addTrainingParam(graph, param->name + ".grad_accum", gradient->type, attrs,
                                     param->producer->loc);
    // .grad += grad(loss) / K: torch differentiates loss / K, which differs by rounding only.
    Value* sum =
        own.op(OpKind::Add,
               {buffer, own.scalarOp(OpKind::Mul, gradient, 1.0 / static_cast<double>(micro))});
    own.op(OpKind::Assign, {buffer, own.op(OpKind::Mul, {sum, own.cast(kept, sum->type.dtype)})},
           {}, buffer->name);
    gradient = sum;
  }
  return applied;
}

}  // namespace gxc
