// split-layers: intra-layer (tensor) parallelism for weights that fit no single device.
//
// Terms
//   - A *layer* here is a matmul or linear whose *weight* is a whole 2-D param that it alone
//     reads, on its own device (its *home*); its other GEMM operand is the *activation*. For
//     h = W x (matmul W, x) the weight's rows are the *free* dim, which becomes the rows of
//     the result, and its columns the *reduction* dim, which it shares with the activation;
//     for linear (y = x W^T + b, W [out, in]) `out` is free and `in` the reduction dim.
//   - A *shard* is the layer computed on a slice of the weight, on one GPU: `%h.shard1`,
//     reading the param shard `%W.shard1` (ir/param_shard.h: the slice is materialized alone,
//     the whole weight never exists anywhere).
//   - An *output split* cuts the free dim: shard i computes rows (or columns) [s_i, e_i) of
//     the result from the whole activation; the layer becomes their `concat`. A *reduction
//     split* cuts the reduction dim: shard i multiplies W[:, s_i:e_i] by the activation's
//     matching `slice`, giving a partial result of the full shape; the layer becomes their
//     sum, a chain of `add`s. Megatron-LM's column- and row-parallel linear layers are these
//     two; here the combine runs on the layer's home, so everything after it is unchanged.
//   - A device's *room*: its memory less the params resident on it (plan-memory keeps them
//     for the whole run) and the largest *working set* of one op there (its activation
//     operands and result, live together at its step). passes/split_layers_plan.h.
//
// When a layer is split
//   A GPU is *over* when its resident params plus its largest working set exceed its memory:
//   then some op there cannot run, whatever the buffer reuse, so plan-memory would refuse
//   the plan. Splitting moves weight bytes off it, so the pass splits the largest splittable
//   weight on an over GPU, and again until no GPU is over or none has one left. Nothing is
//   split that fits: a split costs transfers and launches, and the rest of memory (buffer
//   reuse, the copies insert-copies adds) is plan-memory's to judge. A weight that is not a
//   param (computed), is shared by several layers, or is already a shard is never split; a
//   device over for such reasons is left to plan-memory's report.
//
// Shard choice
//   For each kind, K is the smallest count from 2 up to the run's GPUs whose shards fit:
//   each more shard means one more copy of the activation (output split) or of a full-size
//   partial (reduction split), while the GEMM itself is spread over the K devices either
//   way. Shards are even (np.array_split). Devices are taken in order: the home first (its
//   shard's result needs no copy), then the most room, the lowest index on ties; a device
//   takes a shard if its room holds the shard's weight and the larger of its working set,
//   the shard's, the combine's (on the home) and the activation's slicing (on its device).
//   Between the two kinds the one that moves fewer bytes between devices wins:
//     output:    the activation to each shard device but its own, plus each shard's result
//                to the home but the home's own;
//     reduction: each shard's slice of the activation to its device, plus a full-size
//                partial from every shard device but the home.
//   A tie goes to the output split: concat is exact, a sum adds in another order. The
//   VeryBigModule on 4 GPUs of 6 GiB (x [20000,64] on the host; h = W1 x, W1 [100000,20000];
//   y = W2 h, W2 [20000,100000]; each weight 7.45 GiB) gets one of each. h splits first in
//   2 shards (cuda:0, cuda:2): output moves x twice (2 x 5.1 MB) and the remote half of h
//   (12.8 MB), 23.0 MB in all, against 30.7 MB for reduction (the slices of x, 5.1 MB, plus
//   a whole partial h of 25.6 MB): output wins, because the result is 5 times the
//   activation. y (cuda:1, cuda:3) reads h [100000,64], five times its result [20000,64]:
//   output would send h to both devices (51.2 MB), reduction sends each half of h once
//   (25.6 MB) and one partial y (5.1 MB): reduction wins.
//
// Phases
//   1. Room: DeviceRoom reads the IR: capacity, resident params and working sets per device.
//   2. Plan (split_layers_plan.cpp): the over GPU's largest splittable weight is taken off
//      its room, and planSplit picks the kind, K and the devices; none fitting is a model
//      error naming the layer, its weight and every GPU's room.
//   3. Rewrite: param shards, activation slices, shards and the `to`s that carry the split's
//      own transfers before the layer; the layer becomes the combine; the whole weight's
//      param is erased. Then phase 1 again on the
//      new IR, so the next decision counts the shards just placed; each round removes one
//      whole weight, so this ends.
#include "passes/split_layers.h"

#include <algorithm>
#include <map>
#include <set>

#include "ir/param_shard.h"
#include "passes/split_layers_plan.h"
#include "target/byte_size.h"

namespace gxc {
namespace {

// Phase 3.
class Rewriter {
 public:
  Rewriter(Graph& graph, const SplittableLayer& layer, const SplitPlan& plan)
      : graph_(graph), layer_(layer), plan_(plan), op_(layer.op), name_(op_->layerName()) {}

  void run() {
    Value* bias =
        op_->kind == OpKind::Linear && op_->operands.size() == 3 ? op_->operands[2] : nullptr;
    std::vector<Value*> parts;
    for (size_t i = 0; i < plan_.shards.size(); ++i)
      parts.push_back(moveTo(shard(i), op_->device()));
    Op* weight = layer_.weight;
    combine(parts, bias);
    graph_.eraseOp(weight);
  }

 private:
  bool output() const { return plan_.kind == SplitKind::Output; }

  // A new op right before the layer's, at its location.
  Value* insert(OpKind kind, std::vector<Value*> operands, const std::string& base, TensorType type,
                Attrs attrs) {
    return graph_
        .insertOpBefore(op_, kind, std::move(operands), graph_.uniqueName(base), std::move(type),
                        std::move(attrs), op_->loc)
        ->result;
  }

  Value* weightShard(size_t i) {
    const ShardRange& range = plan_.shards[i];
    Op* weight = layer_.weight;
    ParamShard shard;
    shard.fullShape = weight->result->type.shape;
    shard.axis = output() ? layer_.weightFreeAxis : layer_.weightReduceAxis;
    shard.start = range.start;
    shard.end = range.end;
    Attrs attrs = weight->attrs;
    setParamShard(attrs, shard);
    TensorType type = weight->result->type;
    type.shape[static_cast<size_t>(shard.axis)] = range.end - range.start;
    type.device = range.device;
    return graph_
        .insertOpBefore(weight, OpKind::Param, {},
                        graph_.uniqueName(fmt::format("{}.shard{}", weight->layerName(), i)), type,
                        attrs, weight->loc)
        ->result;
  }

  // `value` moved to `device` by a `to` (VALUE.DEVICE), once per value and device. The split's
  // own transfers are written so, as data-parallel writes its: the IR after the pass shows
  // them, and --strict accepts them (insert-copies lowers each to its copy).
  Value* moveTo(Value* value, const Device& device) {
    if (value->type.device == device) return value;
    Value*& moved = moved_[{value, device.str()}];
    if (moved) return moved;
    std::string suffix = device.str();
    suffix.erase(std::remove(suffix.begin(), suffix.end(), ':'), suffix.end());
    Attrs attrs;
    attrs.set("device", device.str());
    TensorType type = value->type;
    type.device = device;
    moved = insert(OpKind::To, {value}, value->name + "." + suffix, type, attrs);
    return moved;
  }

  // What a shard on `device` reads for `value`. An edge from the layer's device is one the
  // split makes, so it moves by `moveTo`; an edge from elsewhere is one the model already
  // had (the layer read that value across devices), left for insert-copies, and for
  // --strict to refuse as it refused the unsplit layer's.
  Value* readOn(Value* value, const Device& device) {
    return value->type.device == op_->device() ? moveTo(value, device) : value;
  }

  // The activation a reduction shard reads: its slice, cut where the activation is.
  Value* activationFor(size_t i) {
    Value* activation = layer_.activation;
    if (output()) return activation;
    const ShardRange& range = plan_.shards[i];
    Attrs attrs;
    attrs.set("axis", layer_.activationReduceAxis);
    attrs.set("start", range.start);
    attrs.set("end", range.end);
    TensorType type = activation->type;
    type.shape[static_cast<size_t>(layer_.activationReduceAxis)] = range.end - range.start;
    return insert(OpKind::Slice, {activation}, fmt::format("{}.slice{}", activation->name, i), type,
                  attrs);
  }

  Value* shard(size_t i) {
    const ShardRange& range = plan_.shards[i];
    int64_t length = range.end - range.start;
    std::vector<Value*> operands(2);
    operands[layer_.weightOperand] = weightShard(i);
    operands[layer_.weightOperand == 0 ? 1 : 0] = readOn(activationFor(i), range.device);
    Attrs attrs = op_->attrs;
    attrs.set("shard_of", name_);
    if (op_->kind == OpKind::Linear) {
      attrs.set(output() ? "out_features" : "in_features", length);
      if (op_->operands.size() == 3) attrs.set("bias", false);  // added once, after the combine
    }
    TensorType type = op_->result->type;
    if (output()) type.shape[static_cast<size_t>(layer_.resultAxis)] = length;
    type.device = range.device;
    return insert(op_->kind, operands, fmt::format("{}.shard{}", name_, i), type, attrs);
  }

  // The layer's own op becomes the last step, so it keeps its name, device and location.
  void becomeLast(OpKind kind, std::vector<Value*> operands, Attrs attrs) {
    op_->kind = kind;
    op_->operands = std::move(operands);
    op_->attrs = std::move(attrs);
  }

  void combine(const std::vector<Value*>& parts, Value* bias) {
    TensorType whole = op_->result->type;
    // Each step is the last one unless a bias comes after it.
    auto step = [&](OpKind kind, std::vector<Value*> operands, Attrs attrs, const std::string& base,
                    bool last) -> Value* {
      if (last && !bias) {
        becomeLast(kind, std::move(operands), std::move(attrs));
        return op_->result;
      }
      return insert(kind, std::move(operands), base, whole, std::move(attrs));
    };
    Value* combined = nullptr;
    if (output()) {
      Attrs attrs;
      attrs.set("axis", layer_.resultAxis);
      combined = step(OpKind::Concat, parts, attrs, name_ + ".nobias", true);
    } else {
      combined = parts[0];
      for (size_t i = 1; i < parts.size(); ++i) {
        bool last = i + 1 == parts.size();
        combined = step(OpKind::Add, {combined, parts[i]}, {},
                        last ? name_ + ".nobias" : fmt::format("{}.sum{}", name_, i), last);
      }
    }
    if (bias) becomeLast(OpKind::Add, {combined, bias}, {});
  }

  Graph& graph_;
  const SplittableLayer& layer_;
  const SplitPlan& plan_;
  Op* op_;
  std::string name_;
  std::map<std::pair<const Value*, std::string>, Value*> moved_;  // by value and device
};

// Phase 2's picks: every layer whose weight, with its operands and result, exceeds its
// GPU's memory alone (it must be split, whatever else is there), in program order; failing
// those, the splittable layer with the largest weight on a GPU that is over.
std::vector<SplittableLayer> mustSplit(const Graph& graph, const DeviceRoom& room) {
  std::vector<SplittableLayer> layers;
  ReaderCounts readers;
  for (Op* op : graph.ops()) {
    if (op->kind != OpKind::Matmul && op->kind != OpKind::Linear) continue;
    const Device& home = op->device();
    if (!room.limited(home) || op->attrs.has("shard_of")) continue;
    int64_t largestOperand = 0;
    for (const Value* operand : op->operands)
      largestOperand = std::max(largestOperand, operand->type.bytes());
    if (largestOperand + workingBytes(*op) <= room.capacity(home)) continue;  // cheap test first
    if (readers.empty()) readers = countReaders(graph);
    std::optional<SplittableLayer> layer = splittableLayer(op, readers);
    if (layer && layer->weight->result->type.bytes() + workingBytes(*op) > room.capacity(home))
      layers.push_back(*layer);
  }
  return layers;
}

std::optional<SplittableLayer> largestOn(const Graph& graph, const Device& device) {
  ReaderCounts readers = countReaders(graph);
  std::optional<SplittableLayer> best;
  for (Op* op : graph.ops()) {
    if (op->device() != device) continue;
    std::optional<SplittableLayer> layer = splittableLayer(op, readers);
    if (layer &&
        (!best || layer->weight->result->type.bytes() > best->weight->result->type.bytes()))
      best = layer;
  }
  return best;
}

std::string describe(const SplittableLayer& layer, const SplitPlan& plan) {
  std::string devices;
  for (const ShardRange& shard : plan.shards)
    devices += (devices.empty() ? "" : ", ") + shard.device.str();
  return fmt::format("{} {} shards of '{}' on {}, moving {}", plan.shards.size(),
                     plan.kind == SplitKind::Output ? "output" : "reduction",
                     layer.weight->layerName(), devices, formatBytes(plan.bytesMoved));
}

}  // namespace

bool SplitLayersPass::run(Graph& graph, const PassContext& context) const {
  if (!context.target.memoryKnown) return false;
  bool changed = false;
  std::set<std::string> givenUp;  // over GPUs that splitting cannot help: plan-memory's
  while (true) {
    DeviceRoom room(graph, context);  // phase 1
    if (room.gpus().empty()) return changed;
    // Phase 2. The weights that must be split all leave their devices, so that one of them
    // does not keep another's shards or combine off its GPU.
    std::vector<SplittableLayer> must = mustSplit(graph, room);
    std::optional<SplittableLayer> layer;
    for (const SplittableLayer& each : must)
      room.take(each.op->device(), -each.weight->result->type.bytes());
    if (!must.empty()) layer = must.front();
    for (const Device& gpu : room.gpus()) {
      if (layer) break;
      if (givenUp.count(gpu.str()) || !room.over(gpu)) continue;
      layer = largestOn(graph, gpu);
      if (layer)
        room.take(gpu, -layer->weight->result->type.bytes());
      else
        givenUp.insert(gpu.str());
    }
    if (!layer) return changed;
    const Device home = layer->op->device();
    const int64_t weightBytes = layer->weight->result->type.bytes();
    std::optional<SplitPlan> plan = planSplit(*layer, room);
    if (!plan) {
      // The layer alone does not fit its device: say so here, where the cause is known.
      if (!must.empty())
        modelError(layer->op->loc,
                   "layer '{}' does not fit: its weight '{}' ({}) fits on no GPU, nor split "
                   "over up to {} of them (room left besides it: {})",
                   layer->op->layerName(), layer->weight->layerName(), formatBytes(weightBytes),
                   room.gpus().size(), room.describe());
      givenUp.insert(home.str());
      continue;
    }
    if (context.explain)
      context.explain(fmt::format("layer '{}' -> split: its weight does not fit {}: {}",
                                  layer->op->layerName(), home.str(), describe(*layer, *plan)));
    Rewriter(graph, *layer, *plan).run();  // phase 3
    changed = true;
  }
}

}  // namespace gxc
