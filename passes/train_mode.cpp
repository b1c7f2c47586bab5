#include "passes/train_mode.h"

#include <fmt/format.h>

#include "ir/infer_type.h"
#include "passes/autodiff_rules.h"

namespace gxc {
namespace {

// New ops before `anchor`, on its device, at its layer, named LAYER.WHAT.
class Inserter {
 public:
  Inserter(Graph& graph, Op& anchor) : graph_(graph), anchor_(anchor) {}

  Value* op(OpKind kind, std::vector<Value*> operands, Attrs attrs, const std::string& what) {
    TensorType placeholder = operands.at(0)->type;
    placeholder.device = anchor_.result->type.device;
    Op* inserted = graph_.insertOpBefore(&anchor_, kind, std::move(operands),
                                         graph_.uniqueName(anchor_.layerName() + "." + what),
                                         placeholder, std::move(attrs), anchor_.loc);
    inserted->result->type = inferResultType(*inserted);
    return inserted->result;
  }
  Value* scalar(OpKind kind, Value* x, double value, const std::string& what) {
    Attrs attrs;
    attrs.set("scalar", value);
    return op(kind, {x}, attrs, what);
  }
  Value* reshape(Value* x, const Shape& shape, const std::string& what) {
    Attrs attrs;
    attrs.set("shape", std::vector<int64_t>(shape.begin(), shape.end()));
    return op(OpKind::Reshape, {x}, attrs, what);
  }
  void assign(Value* param, Value* value, const std::string& what) {
    op(OpKind::Assign, {param, value}, {}, "update." + what);
  }

 private:
  Graph& graph_;
  Op& anchor_;
};

// `scalar: 1` as an integer: an i64 count stays i64.
Attrs oneMore() {
  Attrs attrs;
  attrs.set("scalar", int64_t{1});
  return attrs;
}

// The param op of `value`, which batch_norm's frontend made: marked as a module buffer. One
// the model passed in as a tensor (F.batch_norm's form) cannot be updated: refused.
Value* markBuffer(const Op& layer, Value* value) {
  if (!value->producer || value->producer->kind != OpKind::Param)
    throw Error(ErrorKind::Model, layer.loc,
                fmt::format("layer '{}': batch_norm in training updates its running statistics, "
                            "but '{}' is not a param the layer owns; let the layer create them "
                            "(no running_mean, running_var in its inputs)",
                            layer.layerName(), value->name));
  value->producer->attrs.set("buffer", true);
  return value;
}

// batch_norm(x, running_mean, running_var[, weight, bias]) with the batch's statistics.
void trainBatchNorm(Graph& graph, Op& op) {
  Inserter at(graph, op);
  Value* x = op.operands[0];
  int64_t rank = x->type.rank();
  int64_t channels = x->type.shape.at(1);
  std::vector<int64_t> axes{0};
  int64_t perChannel = x->type.shape[0];
  for (int64_t axis = 2; axis < rank; ++axis) {
    axes.push_back(axis);
    perChannel *= x->type.shape[axis];
  }
  Attrs overChannels;
  overChannels.set("axis", axes);
  overChannels.set("keepdim", true);
  Value* mean = at.op(OpKind::Mean, {x}, overChannels, "batch_mean");
  Value* centered = at.op(OpKind::Sub, {x, mean}, {}, "centered");
  Value* variance = at.op(OpKind::Mean, {at.op(OpKind::Mul, {centered, centered}, {}, "squares")},
                          overChannels, "batch_var");
  double eps = op.attrs.getFloat("eps", 1e-5);
  Value* deviation =
      at.op(OpKind::Sqrt, {at.scalar(OpKind::Add, variance, eps, "var_eps")}, {}, "batch_std");
  // Running statistics, as nn.BatchNorm updates them in training (momentum 0.1 by default).
  double momentum = op.attrs.getFloat("momentum", 0.1);
  Shape vector{channels};
  auto update = [&](Value* running, Value* batch, double correction, const std::string& what) {
    Value* fresh = at.scalar(OpKind::Mul, at.reshape(batch, vector, what + ".batch"),
                             momentum * correction, what + ".scaled");
    Value* kept = at.scalar(OpKind::Mul, running, 1.0 - momentum, what + ".kept");
    at.assign(markBuffer(op, running), at.op(OpKind::Add, {kept, fresh}, {}, what + ".next"), what);
  };
  update(op.operands[1], mean, 1.0, "running_mean");
  double unbiased = perChannel > 1 ? static_cast<double>(perChannel) / (perChannel - 1) : 1.0;
  update(op.operands[2], variance, unbiased, "running_var");
  if (Value* count = graph.find(op.layerName() + ".num_batches_tracked");
      count && count->producer && count->producer->kind == OpKind::Param)
    at.assign(markBuffer(op, count),
              at.op(OpKind::Add, {count}, oneMore(), "num_batches_tracked.next"),
              "num_batches_tracked");

  // x normalized, then (affine) times the weight plus the bias: the op itself becomes the last
  // step, so that its name and readers stay.
  Shape shape = op.result->type.shape;
  std::vector<Value*> operands{centered, deviation};
  OpKind last = OpKind::Div;
  if (op.operands.size() == 5) {
    Shape broadcast(static_cast<size_t>(rank), 1);
    broadcast[1] = channels;
    Value* normalized = at.op(OpKind::Div, operands, {}, "normalized");
    Value* weight = at.reshape(op.operands[3], broadcast, "weight_bc");
    operands = {at.op(OpKind::Mul, {normalized, weight}, {}, "scaled"),
                at.reshape(op.operands[4], broadcast, "bias_bc")};
    last = OpKind::Add;
  }
  op.kind = last;
  op.operands = operands;
  op.attrs = Attrs{};
  op.result->type = inferResultType(op);
  GXC_CHECK(op.result->type.shape == shape, "train-mode changed the shape of '{}'", op.layerName());
}

// A seed per dropout layer: its mask differs from every other layer's.
int64_t layerSeed(int64_t graphSeed, const std::string& layer) {
  uint64_t hash = 1469598103934665603ull ^ static_cast<uint64_t>(graphSeed);
  for (unsigned char c : layer) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return static_cast<int64_t>(hash >> 1);
}

}  // namespace

bool TrainModePass::run(Graph& graph, const PassContext&) const {
  bool changed = false;
  Value* step = nullptr;
  for (Op* op : std::vector<Op*>(graph.ops())) {
    if (op->kind == OpKind::BatchNorm) {
      trainBatchNorm(graph, *op);
      changed = true;
      continue;
    }
    if (op->kind != OpKind::Dropout || op->operands.size() != 1 ||
        op->attrs.getFloat("p", 0.5) == 0.0)
      continue;
    if (!step) {
      step = graph.find("train.step");
      if (!step) {
        Attrs attrs;
        attrs.set("init", std::string("zeros"));
        attrs.set("seed", int64_t{0});
        attrs.set("role", std::string("rng_state"));
        step =
            addTrainingParam(graph, "train.step", TensorType::of(DType::I64, {}), attrs, op->loc);
      }
    }
    op->operands.push_back(step);
    op->attrs.set("seed", layerSeed(graph.attrs().getInt("seed", 0), op->layerName()));
    changed = true;
  }
  return changed;
}

}  // namespace gxc
