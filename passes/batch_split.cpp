// The batch cut into pieces; the rules it follows and why are in data_parallel.cpp's essay
// (data-parallel gives each piece a device, pipeline-stages gives each piece the stage of the
// op it belongs to).
#include "passes/batch_split.h"

#include <algorithm>
#include <map>

#include "ir/infer_type.h"
#include "passes/data_parallel_rules.h"

namespace gxc {
namespace {

class Rewriter {
 public:
  Rewriter(Graph& graph, const BatchSplitPlan& plan) : graph_(graph), plan_(plan) {}

  BatchSplitResult run() {
    for (Value* input : graph_.inputs())
      if (input->type.rank() >= 1) batched_[input];
    std::vector<Op*> ops = graph_.ops();  // a snapshot: shards are inserted as we go
    distribute(ops);
    gather();
    result_.replicatedOps = originals_.size();
    return std::move(result_);
  }

 private:
  void distribute(const std::vector<Op*>& ops) {
    for (Op* op : ops) {
      if (op->kind == OpKind::Param) continue;
      std::vector<bool> batched;
      for (const Value* operand : op->operands) batched.push_back(batched_.count(operand) != 0);
      BatchRole role = batchRole(*op, batched);
      SplitLayer layer{op->layerName(), role, {}, plan_.wholeDevice(*op)};
      switch (role) {
        case BatchRole::RowWise:
          replicate(*op);
          for (const Value* shard : batched_.at(op->result))
            layer.pieceDevices.push_back(shard->type.device);
          break;
        case BatchRole::BatchReduce:
          // Counted first: combining rewrites the op to read the stacked partials.
          for (size_t s = 0; s < shardsOf(op->operands[0], op).size(); ++s)
            layer.pieceDevices.push_back(plan_.partDevice(*op, s));
          combine(*op);
          break;
        case BatchRole::Unbatched:
        case BatchRole::Whole:
          runWhole(*op);
          break;
      }
      result_.layers.push_back(std::move(layer));
    }
  }

  // A batched value computed by an op is read whole where gather() concatenates it, on its
  // producer's whole device (unplaced until then under data-parallel, where that is the
  // reader's device too); anything else comes through a `to`.
  void runWhole(Op& op) {
    Device device = plan_.wholeDevice(op);
    op.result->type.device = device;
    if (op.kind == OpKind::To) return;  // it moves its operand itself
    for (Value*& operand : op.operands) operand = on(operand, device, &op);
  }

  // The shards of a batched value; a graph input's are made (on the host) the first time.
  const std::vector<Value*>& shardsOf(Value* value, Op* reader) {
    std::vector<Value*>& shards = batched_.at(value);
    if (!shards.empty()) return shards;
    GXC_CHECK(!value->producer, "batched value '{}' has no shards", value->name);
    std::vector<RowRange> chunks = chunkRows(value->type.shape[0], plan_.parts);
    for (size_t i = 0; i < chunks.size(); ++i) {
      Attrs attrs;
      attrs.set("axis", int64_t{0});
      attrs.set("start", chunks[i].start);
      attrs.set("end", chunks[i].end);
      shards.push_back(emit(reader, OpKind::Slice, {value}, pieceName(value->name, i),
                            Device::cpu(), attrs, value->loc));
      result_.pieceOf[shards.back()->producer] = i;
    }
    return shards;
  }

  // Operand `i` of `op` as chunk `shard` reads it on its device: its shard when batched,
  // else itself.
  Value* operandFor(Op& op, size_t i, size_t shard) {
    Value* operand = op.operands[i];
    if (batched_.count(operand)) operand = shardsOf(operand, &op).at(shard);
    return on(operand, plan_.partDevice(op, shard), &op);
  }

  // `value` where `device` can read it: itself when it is there (or a param, which
  // assign-devices replicates), else one explicit `to` per value and device, named as
  // insert-copies names copies. The transfers are the placement's (data-parallel's scatter
  // and gather, the hand-offs between pipeline stages), so --strict lets them through.
  Value* on(Value* value, const Device& device, Op* before) {
    const Device& where = value->type.device;
    // Unplaced ends are left to assign-devices (params it replicates, one-device pipelines).
    if (!where.placed() || !device.placed() || where == device) return value;
    Value*& moved = moved_[{value, device.str()}];
    if (!moved) {
      std::string suffix = device.str();
      suffix.erase(std::remove(suffix.begin(), suffix.end(), ':'), suffix.end());
      Attrs attrs;
      attrs.set("device", device.str());
      moved =
          emit(before, OpKind::To, {value}, value->name + "." + suffix, device, attrs, before->loc);
    }
    return moved;
  }

  void replicate(Op& op) {
    originals_.push_back(&op);
    std::vector<RowRange> chunks = chunkRows(op.result->type.shape[0], plan_.parts);
    std::vector<Value*> shards;
    for (size_t s = 0; s < chunks.size(); ++s) {
      std::vector<Value*> operands;
      for (size_t i = 0; i < op.operands.size(); ++i) operands.push_back(operandFor(op, i, s));
      Attrs attrs = op.attrs;
      if (op.kind == OpKind::Reshape) {
        Shape shape = op.result->type.shape;
        shape[0] = chunks[s].rows();
        attrs.set("shape", shape);
      }
      if (op.kind == OpKind::Dropout && op.operands.size() == 2) {
        // A training mask is drawn by the whole batch's element index: the piece's first
        // element is row `start`'s, so every piece keeps the elements the whole would.
        int64_t rowElements =
            op.result->type.numel() / std::max<int64_t>(1, op.result->type.shape[0]);
        attrs.set("mask_offset", op.attrs.getInt("mask_offset", 0) + chunks[s].start * rowElements);
      }
      Device device = plan_.partDevice(op, s);
      if (op.kind == OpKind::To) attrs.set("device", device.str());  // already there
      shards.push_back(emitPiece(&op, s, op.kind, operands, op.layerName(), device, attrs));
    }
    batched_[op.result] = shards;
  }

  // A batch reduction: partials per shard, combined where it runs whole; `op` itself becomes
  // the last step, so its name and its readers stay.
  void combine(Op& op) {
    if (!isReduction(op.kind))  // a loss
      combineLoss(op);
    else
      combineReduction(op);
  }

  void combineReduction(Op& op) {
    Value* x = op.operands[0];
    Attrs partialAttrs = op.attrs;
    partialAttrs.set("keepdim", true);  // partials stack along dim 0
    // max, min, prod and logsumexp of the partials are those of the whole; a mean is a sum
    // of partial sums, divided below.
    OpKind partialKind = op.kind == OpKind::Mean ? OpKind::Sum : op.kind;
    size_t shardCount = shardsOf(x, &op).size();
    std::vector<Value*> partials;
    for (size_t s = 0; s < shardCount; ++s)
      partials.push_back(emitPiece(&op, s, partialKind, {operandFor(op, 0, s)}, op.layerName(),
                                   plan_.partDevice(op, s), partialAttrs));
    Value* stacked = concatWhole(op, partials, op.layerName() + ".partials");
    if (op.kind != OpKind::Mean) {
      rebuild(op, op.kind, {stacked}, op.attrs);
      return;
    }
    Value* sum = onWhole(op, OpKind::Sum, {stacked}, op.layerName() + ".sum", op.attrs);
    rebuild(op, OpKind::Div, {sum}, scalarAttrs(reducedCount(*x, op.attrs)));
  }

  void combineLoss(Op& op) {
    const std::string& name = op.layerName();
    Attrs partialAttrs = op.attrs;
    partialAttrs.set("reduction", std::string("sum"));
    Attrs oneElement;
    oneElement.set("shape", Shape{1});
    size_t shardCount = shardsOf(op.operands[0], &op).size();
    std::vector<Value*> partials;
    for (size_t s = 0; s < shardCount; ++s) {
      std::vector<Value*> operands;
      for (size_t i = 0; i < op.operands.size(); ++i) operands.push_back(operandFor(op, i, s));
      Device device = plan_.partDevice(op, s);
      Value* loss = emitPiece(&op, s, op.kind, operands, name, device, partialAttrs);
      // concat needs a dim to stack along: the 0-d partial as a vector of one.
      partials.push_back(emit(&op, OpKind::Reshape, {loss}, pieceName(name, s) + ".flat", device,
                              oneElement, op.loc));
      result_.pieceOf[partials.back()->producer] = s;
    }
    Value* stacked = concatWhole(op, partials, name + ".partials");
    if (op.attrs.getString("reduction", "mean") == "sum") {
      rebuild(op, OpKind::Sum, {stacked}, {});
      return;
    }
    Value* sum = onWhole(op, OpKind::Sum, {stacked}, name + ".sum", {});
    if (op.kind == OpKind::CrossEntropy || op.kind == OpKind::NllLoss) {
      rebuild(op, OpKind::Div, {sum, classWeightSum(op, shardCount)}, {});
      return;
    }
    // The elementwise losses average over every element.
    rebuild(op, OpKind::Div, {sum}, scalarAttrs(op.operands[0]->type.numel()));
  }

  // The denominator of a class-index loss's mean: the summed class weights of the targets
  // that are not ignore_index (their count without weights), per shard by the loss itself
  // with `weight_sum`, then summed.
  Value* classWeightSum(Op& op, size_t shardCount) {
    const std::string& name = op.layerName();
    Attrs attrs = op.attrs;
    attrs.set("reduction", std::string("sum"));
    attrs.set("weight_sum", true);
    Attrs oneElement;
    oneElement.set("shape", Shape{1});
    std::vector<Value*> partials;
    for (size_t s = 0; s < shardCount; ++s) {
      std::vector<Value*> operands;
      for (size_t i = 0; i < op.operands.size(); ++i) operands.push_back(operandFor(op, i, s));
      Device device = plan_.partDevice(op, s);
      Value* weights = emitPiece(&op, s, op.kind, operands, name + ".weight_sum", device, attrs);
      partials.push_back(emit(&op, OpKind::Reshape, {weights},
                              pieceName(name + ".weight_sum", s) + ".flat", device, oneElement,
                              op.loc));
      result_.pieceOf[partials.back()->producer] = s;
    }
    Value* stacked = concatWhole(op, partials, name + ".weight_partials");
    return onWhole(op, OpKind::Sum, {stacked}, name + ".weight_sum", {});
  }

  // Backwards, so that when a value is looked at, every op after it that could read
  // it has already been gathered (reading shards) or erased.
  void gather() {
    std::unordered_map<const Value*, int> readers;
    for (const Op* op : graph_.ops())
      for (const Value* operand : op->operands) ++readers[operand];
    for (const GraphOutput& output : graph_.outputs()) ++readers[output.value];
    for (auto it = originals_.rbegin(); it != originals_.rend(); ++it) {
      Op* op = *it;
      for (const Value* operand : op->operands) --readers[operand];
      if (readers[op->result] == 0) {
        graph_.eraseOp(op);
        continue;
      }
      Device device = plan_.wholeDevice(*op);
      std::vector<Value*> shards;
      for (Value* shard : batched_.at(op->result)) shards.push_back(on(shard, device, op));
      Attrs attrs;
      attrs.set("axis", int64_t{0});
      rebuild(*op, OpKind::Concat, shards, attrs);
    }
  }

  Value* emit(Op* before, OpKind kind, std::vector<Value*> operands, const std::string& name,
              const Device& device, Attrs attrs, const SourceLoc& loc) {
    TensorType type;
    type.device = device;
    Op* op = graph_.insertOpBefore(before, kind, std::move(operands), graph_.uniqueName(name), type,
                                   std::move(attrs), loc);
    op->result->type = inferResultType(*op);
    return op->result;
  }

  // An op of piece `piece`, named after `base`, for `before`.
  Value* emitPiece(Op* before, size_t piece, OpKind kind, std::vector<Value*> operands,
                   const std::string& base, const Device& device, Attrs attrs) {
    Value* value = emit(before, kind, std::move(operands), pieceName(base, piece), device,
                        std::move(attrs), before->loc);
    result_.pieceOf[value->producer] = piece;
    return value;
  }

  std::string pieceName(const std::string& name, size_t piece) const {
    return fmt::format("{}.{}{}", name, plan_.suffix, piece);
  }

  // Combinations run where `before` runs whole.
  Value* onWhole(Op& before, OpKind kind, std::vector<Value*> operands, const std::string& name,
                 Attrs attrs) {
    return emit(&before, kind, std::move(operands), name, plan_.wholeDevice(before),
                std::move(attrs), before.loc);
  }

  Value* concatWhole(Op& before, std::vector<Value*> parts, const std::string& name) {
    Device device = plan_.wholeDevice(before);
    for (Value*& part : parts) part = on(part, device, &before);
    Attrs attrs;
    attrs.set("axis", int64_t{0});
    return onWhole(before, OpKind::Concat, std::move(parts), name, attrs);
  }

  // `op` computes the same value another way, where it runs whole.
  void rebuild(Op& op, OpKind kind, std::vector<Value*> operands, Attrs attrs) {
    Shape shape = op.result->type.shape;
    Device device = plan_.wholeDevice(op);
    op.kind = kind;
    op.operands = std::move(operands);
    op.attrs = std::move(attrs);
    op.result->type.device = device;
    op.result->type = inferResultType(op);
    GXC_CHECK(op.result->type.shape == shape, "splitting the batch changed the shape of '{}'",
              op.layerName());
  }

  static Attrs scalarAttrs(int64_t value) {
    Attrs attrs;
    attrs.set("scalar", static_cast<double>(value));
    return attrs;
  }

  // How many elements of `x` a reduction with `attrs` folds into each result element.
  static int64_t reducedCount(const Value& x, const Attrs& attrs) {
    auto axes = attrs.getAxes("axis");
    if (!axes) return x.type.numel();
    int64_t count = 1;
    for (int64_t axis : *axes) count *= x.type.shape[*normalizeAxis(axis, x.type.rank())];
    return count;
  }

  Graph& graph_;
  const BatchSplitPlan& plan_;
  BatchSplitResult result_;
  // Every batched value, with its shards (empty for a graph input not yet read by shard).
  std::map<const Value*, std::vector<Value*>> batched_;
  std::vector<Op*> originals_;  // ops replicated per shard, in program order
  std::map<std::pair<const Value*, std::string>, Value*> moved_;  // `to`s, by value and device
};

}  // namespace

BatchSplitResult splitBatch(Graph& graph, const BatchSplitPlan& plan) {
  GXC_CHECK(plan.parts >= 1 && plan.partDevice && plan.wholeDevice, "an incomplete batch plan");
  return Rewriter(graph, plan).run();
}

}  // namespace gxc
