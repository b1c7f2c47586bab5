// pipeline-stages: GPipe's forward pass as a graph transformation.
//
// Terms
//   - A *layer* is an op of the model other than a param; the layers in program order are a
//     topological order of the computation.
//   - A *stage* is a contiguous run of layers that one device runs; stage i runs on the run's
//     device i, and stages hand their activations on to the next through explicit `to`s.
//   - A *micro-batch* is one of the M pieces that torch.chunk cuts dim 0 of every graph input
//     into; a value computed per micro-batch is NAME.mbI. What is row-wise, what a batch
//     reduction is and what must be read whole are data-parallel's rules (the essay in
//     data_parallel.cpp): the same rewrite, splitBatch, cuts the batch, only the device of
//     each piece differs (the stage of its layer instead of the piece's own device).
//
// Where the constraints come from
//   GPipe (Huang et al., NeurIPS 2019) cuts a sequential model into K contiguous cells, one
//   per accelerator, and feeds them M micro-batches: cell k works on micro-batch j while cell
//   k-1 works on j+1, so the forward pass takes (M + K - 1) cell-times instead of M K, a
//   speedup of at most K M / (M + K - 1) over one device (2M / (M + 1) for two). Three
//   things follow for a compiler:
//     - the cut must balance the cells, since the slowest one sets the pace: the sim cost
//       model prices every layer (target/cost_model.h) and the cut minimizes the
//       slowest stage, each within its device's memory (pipeline_stage_cut.h). Copies between
//       stages are left out of the balance: they run on copy streams, beside the compute;
//     - micro-batches must give the single-batch answer: they are the batch split as
//       data-parallel splits it, with reductions over the batch combined exactly and every
//       value that mixes rows concatenated first, so a model that is not row-wise (the
//       VeryBigModule, whose dim 0 is features) still runs, as one micro-batch;
//     - the schedule must let cells overlap. Each device runs its ops in program order on its
//       compute stream, so the program is put in micro-batch-major order (all of mb0, then
//       all of mb1, ...): stage 0 issues mb1 right after mb0, while stage 1, waiting only for
//       the event of mb0's hand-off, works on mb0. assign-streams adds those events.
//   The model's annotations are placements the user asked for; pipeline keeps them as
//   constraints on the cut (a layer on cuda:i is in stage i) rather than ignoring them, and
//   refuses those no contiguous cut in device order can honour, naming the layer.
//
// Phases
//   1. stageConstraints: each layer's annotation becomes a required stage; a host annotation,
//      a GPU beyond the run or annotations out of order are errors.
//   2. cutStages (pipeline_stage_cut.h): the balanced cut; every layer gets its stage's
//      device, `to` layers their device attribute.
//   3. splitBatch (batch_split.h) with M pieces, each on its layer's stage device; with
//      M = 1, explicitHandOffs only writes the hand-offs between stages as `to`s.
//   4. microbatchMajorOrder: the ops stably sorted by the latest micro-batch they depend on.
//   5. The graph is marked `pipeline_stages = S, microbatches = M`.
#include "passes/pipeline_stages.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include <fmt/ranges.h>

#include "passes/batch_split.h"
#include "passes/data_parallel_rules.h"
#include "passes/pipeline_stage_cut.h"
#include "target/cost_model.h"

namespace gxc {
namespace {

constexpr const char* kStagesMarker = "pipeline_stages";
constexpr const char* kMicrobatchesMarker = "microbatches";

std::vector<Op*> layersOf(const Graph& graph) {
  std::vector<Op*> layers;
  for (Op* op : graph.ops())
    if (op->kind != OpKind::Param) layers.push_back(op);
  return layers;
}

// Phase 1: the stage each annotated layer must be in (-1: free).
std::vector<int> stageConstraints(const std::vector<Op*>& layers, const PassContext& context) {
  std::vector<int> required;
  const Op* latest = nullptr;  // the annotated layer with the highest stage so far
  for (const Op* op : layers) {
    const Device& device = op->device();
    if (!device.placed()) {
      required.push_back(-1);
      continue;
    }
    if (device.isCpu())
      modelError(op->loc,
                 "layer '{}' is placed on cpu, but pipeline placement runs every layer in a stage "
                 "on the run's GPUs",
                 op->layerName());
    if (device.index >= static_cast<int>(context.target.devices.size())) {
      std::vector<std::string> names;
      for (const TargetDevice& run : context.target.devices) names.push_back(run.device.str());
      modelError(op->loc, "layer '{}' is placed on {} but the run's devices are {}",
                 op->layerName(), device.str(), fmt::join(names, ", "));
    }
    if (latest && latest->device().index > device.index)
      modelError(op->loc,
                 "layer '{}' is placed on {} but comes after layer '{}' on {}: pipeline stages "
                 "follow the program order over the devices",
                 op->layerName(), device.str(), latest->layerName(), latest->device().str());
    latest = op;
    required.push_back(device.index);
  }
  return required;
}

StageLayer priced(const Op& op, const Device& gpu, int requiredStage, const CostTable& costs) {
  StageLayer layer;
  layer.seconds = simOpSeconds(op, gpu, costs);
  layer.workingBytes = op.result->type.bytes();
  for (const Value* operand : op.operands) {
    if (operand->producer && operand->producer->kind == OpKind::Param)
      layer.params.push_back(operand);
    else
      layer.workingBytes += operand->type.bytes();
  }
  layer.requiredStage = requiredStage;
  return layer;
}

// Phase 2. Returns the number of stages that got layers.
size_t placeStages(const std::vector<Op*>& layers, const PassContext& context) {
  std::vector<int> required = stageConstraints(layers, context);
  std::vector<StageLayer> prices;
  for (size_t i = 0; i < layers.size(); ++i)
    prices.push_back(priced(*layers[i], context.target.devices.front().device, required[i],
                            context.target.costs));
  std::vector<int64_t> capacity(context.target.devices.size(), 0);
  for (size_t i = 0; i < capacity.size(); ++i)
    capacity[i] = context.target.memoryOf(context.target.devices[i].device);
  std::optional<StageCut> cut = cutStages(prices, capacity);
  GXC_CHECK(cut.has_value(), "annotations in stage order but no cut honours them");
  if (!cut->fitsMemory)
    context.emitNote(
        "pipeline placement found no cut of the layers into stages that fits each device's "
        "memory; it balances time alone, and plan-memory checks what each device needs");
  std::vector<std::vector<const Op*>> stages(context.target.devices.size());
  for (size_t i = 0; i < layers.size(); ++i) {
    const Device& device = context.target.devices[cut->stageOf[i]].device;
    layers[i]->result->type.device = device;
    if (layers[i]->kind == OpKind::To) layers[i]->attrs.set("device", device.str());
    stages[cut->stageOf[i]].push_back(layers[i]);
  }
  size_t used = 0;
  for (size_t s = 0; s < stages.size(); ++s) {
    if (stages[s].empty()) continue;
    ++used;
    if (!context.explain) continue;
    double seconds = 0;
    for (size_t i = 0; i < layers.size(); ++i)
      if (cut->stageOf[i] == s) seconds += prices[i].seconds;
    context.explain(fmt::format(
        "pipeline stage {} on {}: {} layers, '{}' to '{}', {:.1f} us of "
        "{:.1f} us for the slowest stage",
        s, context.target.devices[s].device.str(), stages[s].size(), stages[s].front()->layerName(),
        stages[s].back()->layerName(), seconds * 1e6, cut->bottleneckSeconds * 1e6));
  }
  return used;
}

// Refuses micro-batches that some input cannot give; notes torch.chunk's rounding.
void checkMicrobatches(const Graph& graph, size_t microbatches, const PassContext& context) {
  for (const Value* input : graph.inputs()) {
    if (input->type.rank() < 1) continue;
    int64_t rows = input->type.shape[0];
    if (rows < static_cast<int64_t>(microbatches))
      usageError(
          "--microbatches {}: input '{}' has {} rows (its dim 0, the batch), fewer than the "
          "micro-batches asked for",
          microbatches, input->name, rows);
    size_t pieces = chunkRows(rows, static_cast<int64_t>(microbatches)).size();
    if (pieces != microbatches)
      context.emitNote(fmt::format(
          "input '{}': torch.chunk cuts its {} rows into {} "
          "micro-batches of at most {} rows, not {}",
          input->name, rows, pieces,
          (rows + static_cast<int64_t>(microbatches) - 1) / static_cast<int64_t>(microbatches),
          microbatches));
  }
}

// Phase 4. An op's rank is the latest micro-batch it depends on (its own piece, or any of its
// operands'); sorting stably by rank keeps every operand first (an operand's rank is never
// above its reader's, and within one rank the old order is kept) and puts mb0's work first.
// Ranks are below M, so the stable sort is one bucket per rank, filled in program order.
void microbatchMajorOrder(Graph& graph, const BatchSplitResult& split, size_t microbatches) {
  std::unordered_map<const Value*, size_t> rankOfValue;  // results of ops ranked above 0
  std::vector<std::vector<Op*>> buckets(microbatches);
  for (Op* op : graph.ops()) {
    auto piece = split.pieceOf.find(op);
    size_t r = piece == split.pieceOf.end() ? 0 : piece->second;
    for (const Value* operand : op->operands)
      if (auto it = rankOfValue.find(operand); it != rankOfValue.end()) r = std::max(r, it->second);
    GXC_CHECK(r < microbatches, "op '{}' of micro-batch {} of {}", op->layerName(), r,
              microbatches);
    if (r > 0) rankOfValue.emplace(op->result, r);
    buckets[r].push_back(op);
  }
  if (buckets.size() <= 1 || std::all_of(buckets.begin() + 1, buckets.end(),
                                         [](const auto& bucket) { return bucket.empty(); }))
    return;  // already in order
  std::vector<Op*> order;
  order.reserve(graph.ops().size());
  for (const std::vector<Op*>& bucket : buckets)
    order.insert(order.end(), bucket.begin(), bucket.end());
  graph.reorderOps(std::move(order));
}

// With one micro-batch nothing is split, but the hand-offs between stages are still the
// placement's: one explicit `to` per value and device, as splitBatch writes them.
void explicitHandOffs(Graph& graph) {
  std::map<std::pair<const Value*, std::string>, Value*> moved;
  for (Op* op : std::vector<Op*>(graph.ops())) {
    if (op->kind == OpKind::Param || op->kind == OpKind::To) continue;
    const Device& device = op->device();
    for (Value*& operand : op->operands) {
      const Device& where = operand->type.device;
      if (!where.placed() || !device.placed() || where == device) continue;
      Value*& to = moved[{operand, device.str()}];
      if (!to) {
        std::string suffix = device.str();
        suffix.erase(std::remove(suffix.begin(), suffix.end(), ':'), suffix.end());
        Attrs attrs;
        attrs.set("device", device.str());
        TensorType type = operand->type;
        type.device = device;
        to = graph
                 .insertOpBefore(op, OpKind::To, {operand},
                                 graph.uniqueName(operand->name + "." + suffix), type, attrs,
                                 op->loc)
                 ->result;
      }
      operand = to;
    }
  }
}

}  // namespace

bool PipelineStagesPass::run(Graph& graph, const PassContext& context) const {
  if (context.placement != "pipeline" || graph.attrs().has(kStagesMarker)) return false;
  GXC_CHECK(!context.target.devices.empty(), "a run with no devices");
  for (const Op* op : graph.ops()) {
    GXC_CHECK(op->result->type.known, "pipeline-stages before infer-shapes: '{}' is untyped",
              op->layerName());
    if (op->kind == OpKind::Copy)
      modelError(op->loc, "layer '{}' is a copy: pipeline-stages runs before insert-copies",
                 op->layerName());
  }
  size_t microbatches = context.microbatches > 0 ? static_cast<size_t>(context.microbatches)
                                                 : context.target.devices.size();
  checkMicrobatches(graph, microbatches, context);
  std::vector<Op*> layers = layersOf(graph);
  size_t stages = 1;
  // With one device there is nothing to cut; its annotations are assign-devices' to resolve.
  if (context.target.devices.size() >= 2 && !layers.empty()) stages = placeStages(layers, context);
  if (microbatches >= 2) {
    BatchSplitPlan plan;
    plan.parts = microbatches;
    plan.suffix = "mb";
    plan.partDevice = [](const Op& op, size_t) { return op.device(); };
    plan.wholeDevice = [](const Op& op) { return op.device(); };
    BatchSplitResult split = splitBatch(graph, plan);
    if (split.pieceOf.empty())
      context.emitNote(
          "pipeline placement: no layer reads the batch (dim 0 of the inputs) row by row, so the "
          "model runs as one micro-batch");
    microbatchMajorOrder(graph, split, microbatches);
  } else if (stages >= 2) {
    explicitHandOffs(graph);
  }
  graph.attrs().set(kStagesMarker, static_cast<int64_t>(stages));
  graph.attrs().set(kMicrobatchesMarker, static_cast<int64_t>(microbatches));
  return true;
}

}  // namespace gxc
