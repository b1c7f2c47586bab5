#include "passes/optimizer.h"

#include <cmath>
#include <map>

#include <fmt/format.h>

#include "passes/autodiff_rules.h"
#include "passes/optimizer_accumulate.h"
#include "passes/optimizer_clip.h"

namespace gxc {
namespace {

struct Hyperparameters {
  std::string kind;  // sgd adam adamw
  double lr = 0;
  double momentum = 0, dampening = 0, weightDecay = 0;
  bool nesterov = false;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  // `lr_per_step`: the 0-d param `optimizer.lr` that the driver writes before each step (a
  // schedule's value), read where `lr` would be a constant; null: the constant.
  Value* lrParam = nullptr;
  // `accumulate` K >= 2: whether this run ends K micro-batches (passes/optimizer_accumulate.h);
  // the update's writes happen only then. Null: every run is a step.
  Value* applied = nullptr;
};

[[noreturn]] void optimizerError(const std::string& text) {
  throw Error(ErrorKind::Model, {}, fmt::format("train: optimizer: {}", text));
}

double readNonNegative(const Graph& graph, const std::string& name, double fallback) {
  double value = graph.attrs().getFloat(name, fallback);
  if (!std::isfinite(value) || value < 0)
    optimizerError(fmt::format("{} is {}; it must be a finite number >= 0", name, value));
  return value;
}

Hyperparameters readHyperparameters(const Graph& graph) {
  Hyperparameters h;
  h.kind = graph.attrs().getString("optimizer", "");
  if (h.kind != "sgd" && h.kind != "adam" && h.kind != "adamw")
    optimizerError(fmt::format("'{}' is not one of sgd, adam, adamw", h.kind));
  if (!graph.attrs().has("lr")) optimizerError("no lr");
  h.lr = readNonNegative(graph, "lr", 0);
  h.weightDecay = readNonNegative(graph, "weight_decay", h.kind == "adamw" ? 0.01 : 0.0);
  if (h.kind == "sgd") {
    h.momentum = readNonNegative(graph, "momentum", 0);
    h.dampening = readNonNegative(graph, "dampening", 0);
    h.nesterov = graph.attrs().getBool("nesterov", false);
    if (h.nesterov && (h.momentum <= 0 || h.dampening != 0))
      optimizerError("nesterov needs a momentum and zero dampening (as torch.optim.SGD)");
    return h;
  }
  h.beta1 = readNonNegative(graph, "beta1", 0.9);
  h.beta2 = readNonNegative(graph, "beta2", 0.999);
  h.eps = readNonNegative(graph, "eps", 1e-8);
  if (h.beta1 >= 1 || h.beta2 >= 1) optimizerError("betas must be in [0, 1)");
  return h;
}

// A param of the optimizer's state, zero before the first step.
Value* stateParam(Graph& graph, const std::string& name, const TensorType& type,
                  const SourceLoc& loc) {
  Attrs attrs;
  attrs.set("init", std::string("zeros"));
  attrs.set("seed", int64_t{0});
  attrs.set("role", std::string("optimizer_state"));
  return addTrainingParam(graph, name, type, attrs, loc);
}

// param := value, or where `applied` is given, only when it is true.
void assign(GradBuilder& b, Value* param, Value* value, Value* applied = nullptr) {
  if (applied) value = b.op(OpKind::Where, {applied, value, param});
  b.op(OpKind::Assign, {param, value}, {}, param->name);
}

// torch.optim.SGD's step for one param.
void sgdUpdate(GradBuilder& b, Graph& graph, const Hyperparameters& h, Value* param,
               Value* gradient, Value* firstStep) {
  Value* g = gradient;
  if (h.weightDecay != 0) g = b.op(OpKind::Add, {g, b.scalarOp(OpKind::Mul, param, h.weightDecay)});
  if (h.momentum != 0) {
    Value* buffer =
        stateParam(graph, param->name + ".momentum_buffer", param->type, b.forward().loc);
    // buf = momentum buf + (1 - dampening) g; on the first step buf = g, which the formula
    // gives from a zero buffer unless there is dampening.
    Value* damped = h.dampening == 0 ? g : b.scalarOp(OpKind::Mul, g, 1.0 - h.dampening);
    Value* next = b.op(OpKind::Add, {b.scalarOp(OpKind::Mul, buffer, h.momentum), damped});
    if (firstStep) next = b.op(OpKind::Where, {firstStep, g, next});
    assign(b, buffer, next, h.applied);
    g = h.nesterov ? b.op(OpKind::Add, {g, b.scalarOp(OpKind::Mul, next, h.momentum)}) : next;
  }
  if (h.lrParam)
    assign(b, param, b.op(OpKind::Sub, {param, b.op(OpKind::Mul, {g, h.lrParam})}), h.applied);
  else
    assign(b, param, b.op(OpKind::Add, {param, b.scalarOp(OpKind::Mul, g, -h.lr)}), h.applied);
}

// The bias corrections of Adam at step t (the updated count): 1 - beta^t.
struct BiasCorrections {
  Value* stepSize;          // lr / (1 - beta1^t)
  Value* secondMomentRoot;  // sqrt(1 - beta2^t)
};

Value* oneMinusPower(GradBuilder& b, Value* step, double beta) {
  Value* power = b.op(OpKind::Exp, {b.scalarOp(OpKind::Mul, step, std::log(beta))});
  return b.scalarOp(OpKind::Add, b.op(OpKind::Neg, {power}), 1.0);
}

// torch.optim.Adam's and AdamW's step for one param.
void adamUpdate(GradBuilder& b, Graph& graph, const Hyperparameters& h, Value* param,
                Value* gradient, const BiasCorrections& corrections) {
  Value* g = gradient;
  Value* p = param;
  if (h.kind == "adamw" && h.weightDecay != 0) {
    // p *= 1 - lr weight_decay
    if (h.lrParam)
      p = b.op(OpKind::Mul,
               {param,
                b.scalarOp(OpKind::Add, b.scalarOp(OpKind::Mul, h.lrParam, -h.weightDecay), 1.0)});
    else
      p = b.scalarOp(OpKind::Mul, param, 1.0 - h.lr * h.weightDecay);
  }
  if (h.kind == "adam" && h.weightDecay != 0)
    g = b.op(OpKind::Add, {g, b.scalarOp(OpKind::Mul, param, h.weightDecay)});
  const SourceLoc& loc = b.forward().loc;
  Value* mean = stateParam(graph, param->name + ".exp_avg", param->type, loc);
  Value* square = stateParam(graph, param->name + ".exp_avg_sq", param->type, loc);
  // exp_avg.lerp_(g, 1 - beta1); exp_avg_sq.mul_(beta2).addcmul_(g, g, 1 - beta2)
  Value* nextMean = b.op(
      OpKind::Add, {mean, b.scalarOp(OpKind::Mul, b.op(OpKind::Sub, {g, mean}), 1.0 - h.beta1)});
  Value* nextSquare =
      b.op(OpKind::Add, {b.scalarOp(OpKind::Mul, square, h.beta2),
                         b.scalarOp(OpKind::Mul, b.op(OpKind::Mul, {g, g}), 1.0 - h.beta2)});
  // denom = sqrt(exp_avg_sq) / sqrt(1 - beta2^t) + eps; p -= step_size exp_avg / denom
  Value* denominator = b.scalarOp(
      OpKind::Add,
      b.op(OpKind::Div, {b.op(OpKind::Sqrt, {nextSquare}), corrections.secondMomentRoot}), h.eps);
  Value* delta =
      b.op(OpKind::Mul, {b.op(OpKind::Div, {nextMean, denominator}), corrections.stepSize});
  assign(b, mean, nextMean, h.applied);
  assign(b, square, nextSquare, h.applied);
  assign(b, param, b.op(OpKind::Sub, {p, delta}), h.applied);
}

}  // namespace

bool OptimizerPass::run(Graph& graph, const PassContext&) const {
  Hyperparameters h = readHyperparameters(graph);
  std::vector<std::pair<Value*, Value*>> updates;  // param, gradient
  for (size_t i = 0; i < graph.outputs().size();) {
    const GraphOutput& output = graph.outputs()[i];
    Value* param = output.name.rfind("grad.", 0) == 0 ? graph.find(output.name.substr(5)) : nullptr;
    if (!param || !param->producer || param->producer->kind != OpKind::Param) {
      ++i;
      continue;
    }
    updates.emplace_back(param, output.value);
    graph.removeOutput(i);
  }
  if (updates.empty())
    throw Error(ErrorKind::Model, {},
                "optimizer: the graph has no gradient outputs grad.NAME (run autodiff first)");
  // torch's order: the micro-batches' gradients summed, then clipped, then the step.
  if (graph.attrs().getInt("accumulate", 1) > 1) h.applied = accumulateGradients(graph, updates);
  if (graph.attrs().has("clip_grad_max_norm")) clipGradNorm(graph, updates);

  // The step count, where the update depends on it.
  bool counts = h.kind != "sgd" || (h.momentum != 0 && h.dampening != 0);
  Value* step = nullptr;
  Value* nextStep = nullptr;
  const Op& first = *updates.front().first->producer;
  GradBuilder stepBuilder(graph, first, "update", "optimizer.step");
  if (counts) {
    TensorType scalar = updates.front().first->type;
    scalar.shape = {};
    step = stateParam(graph, "optimizer.step", scalar, first.loc);
    nextStep = stepBuilder.scalarOp(OpKind::Add, step, 1.0);
  }
  if (graph.attrs().getBool("lr_per_step", false)) {
    TensorType scalar = updates.front().first->type;
    scalar.shape = {};
    Attrs attrs;
    attrs.set("init", std::string("constant"));
    attrs.set("value", h.lr);  // until the driver writes it: the step's lr is the constant's
    attrs.set("seed", int64_t{0});
    attrs.set("role", std::string("optimizer_state"));
    h.lrParam = addTrainingParam(graph, "optimizer.lr", scalar, attrs, first.loc);
  }
  BiasCorrections corrections{};
  Value* firstStep = nullptr;
  if (h.kind == "sgd" && counts) firstStep = stepBuilder.scalarOp(OpKind::Eq, step, 0.0);
  if (h.kind != "sgd") {
    Value* firstMoment = oneMinusPower(stepBuilder, nextStep, h.beta1);
    Value* reciprocal = stepBuilder.op(OpKind::Reciprocal, {firstMoment});
    corrections.stepSize = h.lrParam ? stepBuilder.op(OpKind::Mul, {reciprocal, h.lrParam})
                                     : stepBuilder.scalarOp(OpKind::Mul, reciprocal, h.lr);
    corrections.secondMomentRoot =
        stepBuilder.op(OpKind::Sqrt, {oneMinusPower(stepBuilder, nextStep, h.beta2)});
  }
  for (auto [param, gradient] : updates) {
    GradBuilder builder(graph, *param->producer, "update");
    if (h.kind == "sgd")
      sgdUpdate(builder, graph, h, param, gradient, firstStep);
    else
      adamUpdate(builder, graph, h, param, gradient, corrections);
  }
  if (step) assign(stepBuilder, step, nextStep, h.applied);
  // train-mode's step count of the dropout masks: one more, once everything has read it.
  for (Op* op : std::vector<Op*>(graph.ops())) {
    if (op->kind != OpKind::Param || op->attrs.getString("role", "") != "rng_state") continue;
    GradBuilder counter(graph, *op, "update");
    Attrs one;
    one.set("scalar", int64_t{1});  // an integer: the i64 count stays i64
    assign(counter, op->result, counter.op(OpKind::Add, {op->result}, one));
  }
  return true;
}

}  // namespace gxc
