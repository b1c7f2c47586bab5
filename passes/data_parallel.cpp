// data-parallel: nn.DataParallel as a graph transformation.
//
// Terms
//   - The *batch* of a value is its dim 0. A graph input's batch is cut across the run's k
//     devices as torch.chunk cuts it (data_parallel_rules.h); its pieces are *chunks*, and
//     chunk I goes to the run's device I. A value is *batched* when it exists as one *shard*
//     per chunk (NAME.shardI on device I) rather than whole; graph inputs of rank >= 1 are
//     batched, and so is the result of every row-wise op on batched operands.
//   - A *row-wise* op treats dim 0 of its batched operands row by row: row r of its result
//     depends on row r of each batched operand and on the whole of its other (unbatched)
//     operands, so running it on each shard and stacking the results gives the op's result.
//     Which ops are row-wise follows from their semantics:
//       elementwise ops (unary; binary when each unbatched operand broadcasts over dim 0);
//       linear (nn.Linear treats every leading dim as a batch); matmul x @ W with the batch
//       as the rows of x, or a 3-D stack whose stack dim is the batch;
//       softmax, log_softmax over an axis other than 0; layer_norm (over the last dim);
//       sum, mean, max over axes that leave 0 out; reshape that keeps dim 0 (row-major: each
//       row keeps its elements); transpose whose perm starts with 0; concat along an axis
//       other than 0 of batched values; embedding (a lookup per index); `to` (each replica
//       already holds its shard where it runs); losses with reduction none.
//     Everything else is not: matmul W @ x reads every row of x for each output element
//     (models/very_big_module_small.yaml, where dim 0 of x is features, not a batch), a
//     transpose that moves dim 0, a reshape that merges or cuts dim 0, concat along 0.
//   - A *batch reduction* reduces over dim 0: sum, mean and max over axis 0 (or all axes),
//     mse_loss and cross_entropy with reduction mean or sum.
//
// Where the constraints come from
//   DataParallel's contract is that the replicas together compute what the module computes on
//   the whole batch; the only freedom is the order of additions. So a mean is never a mean of
//   per-device means (chunks are uneven: 130 rows over 4 devices are 33, 33, 33, 31), nor a
//   weighted cross_entropy a mean of per-device means (its denominator is the sum of the
//   targets' class weights, which differs per chunk). Each reduction is split into partials
//   that add up (or max up) exactly:
//     sum, max over the batch: the same reduction per shard (keepdim), the partials
//       concatenated on the first device and reduced again over the same axes;
//     mean over the batch: per-shard sums, combined as above, divided by the number of
//       elements reduced in the whole value;
//     mse_loss: per-shard losses with reduction sum, added; for mean, divided by the number
//       of elements of the whole prediction;
//     cross_entropy: per-shard losses with reduction sum, added; for mean without a weight,
//       divided by the batch size; with a class weight w, divided by the sum over the batch
//       of w[target], computed per shard as sum(embedding(target, reshape(w, [C, 1]))) and
//       added on the first device, exactly what F.cross_entropy divides by.
//   The first device is where DataParallel gathers: outputs and everything that is not
//   row-wise run there. Params are left unplaced, so assign-devices replicates each one to
//   every device whose ops read it, as DataParallel replicates the module. The transfers
//   DataParallel makes (chunks scattered from the host, shards and partials gathered on the
//   first device, values of the first device broadcast to the replicas that read them) are
//   part of the placement the user chose, so they are written as explicit `to` ops, which
//   insert-copies lowers to copies and --strict accepts.
//
// Phases
//   1. dropAnnotations: the model's device annotations are ignored (one note says so);
//      inputs go to the host, params are unplaced. With one device this is all.
//   2. Rewriter::distribute walks the ops in order and gives each its BatchRole: row-wise ops
//      are replicated per shard (input shards are `slice` ops on the host, made when first
//      read), batch reductions become partials and their combination (the original op, kept
//      under its name, becomes the last step), the others run once on the first device.
//      Every operand on another device comes through Rewriter::on, the one `to` per value
//      and device.
//   3. Rewriter::gather: every batched value that something still reads whole (an op that is
//      not row-wise, or an output) becomes the concatenation of its shards along dim 0 on the
//      first device, under its own name; the unread ones disappear.
//   4. The graph is marked `data_parallel = k`, so a second run leaves it alone.
#include "passes/data_parallel.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "ir/infer_type.h"
#include "passes/data_parallel_rules.h"

namespace gxc {
namespace {

constexpr const char* kMarker = "data_parallel";

std::string shardName(const std::string& name, size_t shard) {
  return fmt::format("{}.shard{}", name, shard);
}

class Rewriter {
 public:
  Rewriter(Graph& graph, const PassContext& context)
      : graph_(graph), devices_(context.devices), first_(context.devices.front()) {}

  void run() {
    for (Value* input : graph_.inputs())
      if (input->type.rank() >= 1) batched_[input];
    std::vector<Op*> ops = graph_.ops();  // a snapshot: shards are inserted as we go
    distribute(ops);
    gather();
    graph_.attrs().set(kMarker, static_cast<int64_t>(devices_.size()));
  }

 private:
  // Phase 2.
  void distribute(const std::vector<Op*>& ops) {
    for (Op* op : ops) {
      if (op->kind == OpKind::Param) continue;
      std::vector<bool> batched;
      for (const Value* operand : op->operands) batched.push_back(batched_.count(operand) != 0);
      switch (batchRole(*op, batched)) {
        case BatchRole::RowWise:
          replicate(*op);
          break;
        case BatchRole::BatchReduce:
          combine(*op);
          break;
        case BatchRole::Unbatched:
        case BatchRole::Whole:
          runOnFirst(*op);
          break;
      }
    }
  }

  // A batched value computed by an op is read whole where phase 3 gathers it, on the first
  // device; anything else comes to the first device through a `to`.
  void runOnFirst(Op& op) {
    op.result->type.device = first_;
    if (op.kind == OpKind::To) return;  // it moves its operand itself
    for (Value*& operand : op.operands)
      if (!(batched_.count(operand) && operand->producer)) operand = on(operand, first_, &op);
  }

  // The shards of a batched value; a graph input's are made (on the host) the first time.
  const std::vector<Value*>& shardsOf(Value* value, Op* reader) {
    std::vector<Value*>& shards = batched_.at(value);
    if (!shards.empty()) return shards;
    GXC_CHECK(!value->producer, "batched value '{}' has no shards", value->name);
    std::vector<RowRange> chunks = chunkRows(value->type.shape[0], devices_.size());
    for (size_t i = 0; i < chunks.size(); ++i) {
      Attrs attrs;
      attrs.set("axis", int64_t{0});
      attrs.set("start", chunks[i].start);
      attrs.set("end", chunks[i].end);
      shards.push_back(emit(reader, OpKind::Slice, {value}, shardName(value->name, i),
                            Device::cpu(), attrs, value->loc));
    }
    return shards;
  }

  // Operand `i` of `op` as chunk `shard` reads it on its device: its shard when batched,
  // else itself.
  Value* operandFor(Op& op, size_t i, size_t shard) {
    Value* operand = op.operands[i];
    if (batched_.count(operand)) operand = shardsOf(operand, &op).at(shard);
    return on(operand, devices_[shard], &op);
  }

  // `value` where `device` can read it: itself when it is there (or a param, which
  // assign-devices replicates), else one explicit `to` per value and device, named as
  // insert-copies names copies. The transfers are DataParallel's scatter and gather, which
  // the placement asked for, so --strict lets them through.
  Value* on(Value* value, const Device& device, Op* before) {
    const Device& where = value->type.device;
    if (!where.placed() || where == device) return value;
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
    std::vector<RowRange> chunks = chunkRows(op.result->type.shape[0], devices_.size());
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
      if (op.kind == OpKind::To) attrs.set("device", devices_[s].str());  // already there
      shards.push_back(
          emit(&op, op.kind, operands, shardName(op.layerName(), s), devices_[s], attrs, op.loc));
    }
    batched_[op.result] = shards;
  }

  // A batch reduction: partials per shard, combined on the first device; `op` itself becomes
  // the last step, so its name and its readers stay.
  void combine(Op& op) {
    if (op.kind == OpKind::MseLoss || op.kind == OpKind::CrossEntropy)
      combineLoss(op);
    else
      combineReduction(op);
  }

  void combineReduction(Op& op) {
    Value* x = op.operands[0];
    Attrs partialAttrs = op.attrs;
    partialAttrs.set("keepdim", true);  // partials stack along dim 0
    OpKind partialKind = op.kind == OpKind::Max ? OpKind::Max : OpKind::Sum;
    size_t shardCount = shardsOf(x, &op).size();
    std::vector<Value*> partials;
    for (size_t s = 0; s < shardCount; ++s)
      partials.push_back(emit(&op, partialKind, {operandFor(op, 0, s)},
                              shardName(op.layerName(), s), devices_[s], partialAttrs, op.loc));
    Value* stacked = concatOnFirst(op, partials, op.layerName() + ".partials");
    if (op.kind != OpKind::Mean) {
      rebuild(op, op.kind, {stacked}, op.attrs);
      return;
    }
    Value* sum = onFirst(op, OpKind::Sum, {stacked}, op.layerName() + ".sum", op.attrs);
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
      Value* loss =
          emit(&op, op.kind, operands, shardName(name, s), devices_[s], partialAttrs, op.loc);
      // concat needs a dim to stack along: the 0-d partial as a vector of one.
      partials.push_back(emit(&op, OpKind::Reshape, {loss}, shardName(name, s) + ".flat",
                              devices_[s], oneElement, op.loc));
    }
    Value* stacked = concatOnFirst(op, partials, name + ".partials");
    if (op.attrs.getString("reduction", "mean") == "sum") {
      rebuild(op, OpKind::Sum, {stacked}, {});
      return;
    }
    Value* sum = onFirst(op, OpKind::Sum, {stacked}, name + ".sum", {});
    if (op.kind == OpKind::CrossEntropy && op.operands.size() == 3) {
      rebuild(op, OpKind::Div, {sum, classWeightSum(op, shardCount)}, {});
      return;
    }
    // mse_loss averages over every element, cross_entropy over the samples.
    const TensorType& pred = op.operands[0]->type;
    int64_t count = op.kind == OpKind::MseLoss ? pred.numel() : pred.shape[0];
    rebuild(op, OpKind::Div, {sum}, scalarAttrs(count));
  }

  // The denominator of a weighted cross_entropy mean: the sum over the batch of
  // weight[target], a lookup of the weight as a [C, 1] table per shard, summed.
  Value* classWeightSum(Op& op, size_t shardCount) {
    const std::string& name = op.layerName();
    Value* weight = op.operands[2];
    int64_t classes = weight->type.shape[0];
    Attrs column, lookup, overRows;
    column.set("shape", Shape{classes, 1});
    lookup.set("num_embeddings", classes);
    lookup.set("embedding_dim", int64_t{1});
    overRows.set("axis", int64_t{0});
    std::vector<Value*> partials;
    for (size_t s = 0; s < shardCount; ++s) {
      const Device& device = devices_[s];
      Value* table = emit(&op, OpKind::Reshape, {operandFor(op, 2, s)},
                          shardName(name + ".weight_column", s), device, column, op.loc);
      Value* weights = emit(&op, OpKind::Embedding, {operandFor(op, 1, s), table},
                            shardName(name + ".weights", s), device, lookup, op.loc);
      partials.push_back(emit(&op, OpKind::Sum, {weights}, shardName(name + ".weight_sum", s),
                              device, overRows, op.loc));
    }
    Value* stacked = concatOnFirst(op, partials, name + ".weight_partials");
    return onFirst(op, OpKind::Sum, {stacked}, name + ".weight_sum", {});
  }

  // Phase 3. Backwards, so that when a value is looked at, every op after it that could read
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
      std::vector<Value*> shards;
      for (Value* shard : batched_.at(op->result)) shards.push_back(on(shard, first_, op));
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

  Value* onFirst(Op& before, OpKind kind, std::vector<Value*> operands, const std::string& name,
                 Attrs attrs) {
    return emit(&before, kind, std::move(operands), name, first_, std::move(attrs), before.loc);
  }

  Value* concatOnFirst(Op& before, std::vector<Value*> parts, const std::string& name) {
    for (Value*& part : parts) part = on(part, first_, &before);
    Attrs attrs;
    attrs.set("axis", int64_t{0});
    return onFirst(before, OpKind::Concat, std::move(parts), name, attrs);
  }

  // `op` computes the same value another way, on the first device.
  void rebuild(Op& op, OpKind kind, std::vector<Value*> operands, Attrs attrs) {
    Shape shape = op.result->type.shape;
    op.kind = kind;
    op.operands = std::move(operands);
    op.attrs = std::move(attrs);
    op.result->type.device = first_;
    op.result->type = inferResultType(op);
    GXC_CHECK(op.result->type.shape == shape, "data-parallel changed the shape of '{}'",
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
  const std::vector<Device>& devices_;
  Device first_;
  // Every batched value, with its shards (empty for a graph input not yet read by shard).
  std::map<const Value*, std::vector<Value*>> batched_;
  std::vector<Op*> originals_;  // ops replicated per shard, in program order
  std::map<std::pair<const Value*, std::string>, Value*> moved_;  // `to`s, by value and device
};

}  // namespace

bool DataParallelPass::run(Graph& graph, const PassContext& context) const {
  if (context.placement != "data-parallel" || graph.attrs().has(kMarker)) return false;
  GXC_CHECK(!context.devices.empty(), "a run with no devices");
  for (const Op* op : graph.ops()) {
    GXC_CHECK(op->result->type.known, "data-parallel before infer-shapes: '{}' is untyped",
              op->layerName());
    if (op->kind == OpKind::Copy)
      modelError(op->loc, "layer '{}' is a copy: data-parallel runs before insert-copies",
                 op->layerName());
  }
  bool changed = dropAnnotations(graph, context);
  if (context.devices.size() < 2) return changed;
  Rewriter(graph, context).run();
  return true;
}

}  // namespace gxc
