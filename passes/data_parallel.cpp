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
//   2. splitBatch (batch_split.h, shared with pipeline-stages) walks the ops in order and
//      gives each its BatchRole: row-wise ops are replicated per shard (input shards are
//      `slice` ops on the host, made when first read), batch reductions become partials and
//      their combination (the original op, kept under its name, becomes the last step), the
//      others run once on the first device. Every operand on another device comes through
//      one `to` per value and device.
//   3. Still in splitBatch: every batched value that something still reads whole (an op that
//      is not row-wise, or an output) becomes the concatenation of its shards along dim 0 on
//      the first device, under its own name; the unread ones disappear.
//   4. The graph is marked `data_parallel = k`, so a second run leaves it alone.
#include "passes/data_parallel.h"

#include <fmt/ranges.h>

#include "passes/batch_split.h"
#include "passes/data_parallel_rules.h"

namespace gxc {
namespace {

constexpr const char* kMarker = "data_parallel";

std::string deviceList(const std::vector<Device>& devices) {
  std::vector<std::string> names;
  for (const Device& device : devices) names.push_back(device.str());
  return fmt::format("{}", fmt::join(names, ", "));
}

// --explain: one line per layer of the model, with the reason data-parallel placed it so.
// The ops the split made (slices of the inputs, `to`s, gathers) are its means, not layers.
void explainLayers(const BatchSplitResult& split, const PassContext& context) {
  for (const SplitLayer& layer : split.layers) {
    std::string where = layer.wholeDevice.str(), why;
    switch (layer.role) {
      case BatchRole::RowWise:
        where = deviceList(layer.pieceDevices);
        why = fmt::format("row-wise: shard i of {} of the batch on the i-th device",
                          layer.pieceDevices.size());
        break;
      case BatchRole::BatchReduce:
        where = deviceList(layer.pieceDevices);
        why = fmt::format("reduces over the batch: a partial per shard, combined on {}",
                          layer.wholeDevice.str());
        break;
      case BatchRole::Whole:
        why = "mixes rows of the batch: runs once, on its inputs gathered there";
        break;
      case BatchRole::Unbatched:
        why = "none of its inputs is split by the batch: runs once";
        break;
    }
    context.explain(fmt::format("layer '{}' -> {}: data-parallel: {}", layer.name, where, why));
  }
}

}  // namespace

bool DataParallelPass::run(Graph& graph, const PassContext& context) const {
  if (context.placement != "data-parallel" || graph.attrs().has(kMarker)) return false;
  GXC_CHECK(!context.target.devices.empty(), "a run with no devices");
  for (const Op* op : graph.ops()) {
    GXC_CHECK(op->result->type.known, "data-parallel before infer-shapes: '{}' is untyped",
              op->layerName());
    if (op->kind == OpKind::Copy)
      modelError(op->loc, "layer '{}' is a copy: data-parallel runs before insert-copies",
                 op->layerName());
  }
  bool changed = dropAnnotations(graph, context);
  if (context.target.devices.size() < 2) return changed;
  BatchSplitPlan plan;
  plan.parts = context.target.devices.size();
  plan.suffix = "shard";
  plan.partDevice = [&](const Op&, size_t shard) { return context.target.devices[shard].device; };
  plan.wholeDevice = [&](const Op&) { return context.target.devices.front().device; };
  BatchSplitResult split = splitBatch(graph, plan);
  if (context.explain) explainLayers(split, context);
  graph.attrs().set(kMarker, static_cast<int64_t>(context.target.devices.size()));
  return true;
}

}  // namespace gxc
