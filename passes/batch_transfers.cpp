// batch-transfers: one transfer for copies that can move together.
//
// Why. Every copy pays a fixed cost before its first byte moves: about 5 us of driver work and
// DMA setup (cudaMemcpyAsync; the sim's copyLatencySeconds). A model that uploads many small
// tensors, or a stage boundary that many small activations cross together, pays it once per
// tensor while the link idles: 200 copies of 4 KiB spend 1 ms in latency to move 800 KiB that
// PCIe carries in 20 us. Packed into one buffer, they pay it once.
//
// Prior art. Packing tensors into one flat buffer is how data-parallel training communicates:
// PyTorch DDP all-reduces gradient buckets, Horovod fuses tensors before a collective, Apex
// and DeepSpeed keep flat parameter buffers. Point-to-point copies are another matter: PyTorch
// `.to()`, TensorFlow's Send/Recv and ONNX Runtime's Memcpy nodes move one tensor per
// transfer. No system we know of batches the GPU-to-GPU copies of a model-parallel graph; gxc
// does, and host<->device copies too.
//
// Terms. A *group*: the copies of one dtype from one device to another (one buffer has one
// dtype). A *batch*: copies of a group that move as one. Its *leader* is the member whose
// earliest consumer comes first; that consumer is the *batch point*. The sources are *packed*
// on the source device into `%batchN` by `concat` (after `reshape` to [-1] when their shapes
// differ beyond dim 0; when they agree they stack along dim 0 as they are), `%batchN.cuda0`
// moves it, and *pieces* (`slice`, then `reshape` back if flattened) unpack it before the
// batch point, under the names of the copies they replace, so later IR reads as before.
//
// Where the constraints come from.
// - One point in time. A batch leaves when its last source is ready, so the batch point waits
//   for every source. "Defined before the batch point" in program order is not enough: in a
//   pipeline, micro-batch 2's activation may be defined before stage 2 starts micro-batch 1,
//   and one transfer of both would make stage 2 wait for stage 1's second micro-batch,
//   undoing the pipeline. So a copy joins only if the batch point already waits for its
//   source: the source is an ancestor of the batch point, or comes before one on the same
//   stream (a stream runs in program order; assign-streams' streamOf names it). The
//   *frontier* of an op maps each stream to the last op of it the op is ordered after; a
//   source is ready for the batch point when the batch point's frontier on the source's
//   stream reaches it. Graph inputs are ready from the start, and params defined before the
//   batch point in program order (the pack follows them); copies read only by
//   graph outputs have the end of the graph as batch point, which waits for everything.
//   Members consumed later run on the destination after the batch point, so they gain no
//   wait either.
// - Size. A member saves one DMA latency, 5 us. It costs one more read and write of its bytes
//   on the source (the pack, a concat kernel) and, since the batch point waits for the whole
//   buffer, up to bytes over the link's rate before it; across PCIe that rate is the staging
//   pipeline's slower leg, the host memcpy. Unpacking is free: the pieces are views (rows of
//   the packed buffer, reshaped), on every platform. All by the cost table the pass is given
//   (context.target.costs): with the H100 table's figures (host memcpy 8 GB/s, gxc's host
//   kernels 0.7 GB/s, HBM 3 TB/s, NVLink 380 GB/s) a member pays for itself below 1.6 KiB
//   toward a GPU (the host's concat is the dear part), below 39 KiB toward the host, below
//   1.4 MiB over NVLink. Larger copies move alone; for them the latency is a small part of
//   the time anyway.
// - A batch has two members at least; empty tensors are left alone (nothing to slice).
// - A batch has kMaxKernelArgs - 1 members at most (ir/fused_kernel.h): the pack is one
//   concat, one generated kernel, whose arguments are the result and every source.
//
// What it costs, what it saves. The packed buffer exists on both sides while it moves (each
// member's bytes once more on each device until unpacked), plus a pack and an unpack op per
// member. The unpacking pieces are views (as PyTorch's _unflatten_dense_tensors: a narrow and
// a view per tensor, no kernel), and the sim prices them so. bench/batch_transfers_bench
// (bench/RESULTS.md) measures what a batch saves on 200 small tensors. Copies whose transfer
// already hides behind compute (outputs made one by one and sent home) gain nothing: a batch
// saves time only where the copy stream is what the run waits for.
//
// Phases, in rounds until a round forms no batch (so a second run finds none: idempotent); a
// batch whose sources or batch point are copies that another batch of the round replaces
// (copies of copies: `to` layers) waits for the next round's analysis of the new graph:
//   1. Analysis: positions, readers, the candidates of each group (a copy this pass did not
//      make, not empty, not too large, read by something) and, if a group has two, frontiers.
//   2. Analysis::formBatches: per group, in the order of their consumers, the first pending
//      copy leads a batch that every later pending copy joins if its source is ready.
//   3. BatchWriter (batch_transfers_writer.h): packs right after the last source (packing at the
//   batch point would make
//      the pack wait for unrelated work queued on the source's stream), copies and unpacks
//      right before the batch point.
#include "passes/batch_transfers.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "ir/fused_kernel.h"
#include "passes/assign_streams.h"
#include "passes/batch_transfers_writer.h"
#include "target/cost_model.h"

namespace gxc {
namespace {

constexpr size_t kMaxMembers = kMaxKernelArgs - 1;  // the pack's kernel: the result, then these

double memoryBytesPerSecond(const Device& device, const CostTable& costs) {
  return device.isCpu() ? costs.hostMemoryBytesPerSecond : costs.memoryBytesPerSecond;
}

}  // namespace

int64_t maxBatchedCopyBytes(const Device& from, const Device& to, const CostTable& costs) {
  // A member saves one DMA latency. Per byte it costs the link (across PCIe the staging
  // pipeline's slower leg) and the pack on the source (a concat kernel: read and write); its
  // unpacking on the destination is a view, on every platform.
  double link = from.isCpu() || to.isCpu()
                    ? std::max(1 / costs.hostMemcpyBytesPerSecond,
                               1 / (from.isCpu() ? costs.hostToDevicePinnedBytesPerSecond
                                                 : costs.deviceToHostPinnedBytesPerSecond))
                    : 1 / costs.deviceToDeviceBytesPerSecond;
  double secondsPerByte = link + 2 / memoryBytesPerSecond(from, costs);
  return std::max<int64_t>(0, static_cast<int64_t>(costs.copyLatencySeconds / secondsPerByte));
}

namespace {

bool consumedFirst(const BatchCandidate& a, const BatchCandidate& b) {
  return std::tie(a.consumerIndex, a.copyIndex) < std::tie(b.consumerIndex, b.copyIndex);
}

using GroupKey = std::tuple<std::string, std::string, DType>;

GroupKey groupOf(const Op& copy) {
  return {sourceDevice(copy).str(), copy.device().str(), copy.result->type.dtype};
}

// Empty tensors and copies too large to pay for their share are never batched.
bool worthBatching(const Op& copy, const CostTable& costs) {
  const TensorType& type = copy.result->type;
  GXC_CHECK(type.known, "batch-transfers before infer-shapes: copy '{}' is untyped",
            copy.layerName());
  return type.numel() > 0 &&
         type.bytes() <= maxBatchedCopyBytes(sourceDevice(copy), type.device, costs);
}

// A transfer this pass made: a packed buffer that only the slices unpacking it read.
bool isBatchedTransfer(const Op& copy, const std::vector<Op*>& readers) {
  const Op* producer = copy.operands[0]->producer;
  if (!producer || producer->kind != OpKind::Concat || readers.empty()) return false;
  return std::all_of(readers.begin(), readers.end(),
                     [](const Op* op) { return op->kind == OpKind::Slice; });
}

class Analysis {
 public:
  Analysis(const Graph& graph, const CostTable& costs) : graph_(graph) {
    // A cheap look first: most graphs have no two small copies between one pair of devices.
    std::map<GroupKey, int> counts;
    bool anyPair = false;
    for (const Op* op : graph.ops())
      if (op->kind == OpKind::Copy && worthBatching(*op, costs))
        anyPair |= ++counts[groupOf(*op)] > 1;
    if (!anyPair) return;
    const std::vector<Op*>& ops = graph.ops();
    for (size_t i = 0; i < ops.size(); ++i) {
      index_[ops[i]] = i;
      for (const Value* operand : ops[i]->operands) readers_[operand].push_back(ops[i]);
    }
    for (const GraphOutput& output : graph.outputs()) outputs_.insert(output.value);
    for (size_t i = 0; i < ops.size(); ++i)
      if (ops[i]->kind == OpKind::Copy && worthBatching(*ops[i], costs)) addCandidate(ops[i], i);
  }

  std::vector<Batch> formBatches() {
    std::vector<Batch> batches;
    if (std::none_of(groups_.begin(), groups_.end(),
                     [](const auto& group) { return group.second.size() > 1; }))
      return batches;
    computeFrontiers();
    for (auto& [key, pending] : groups_) {
      std::sort(pending.begin(), pending.end(), consumedFirst);
      while (!pending.empty()) {
        Batch batch = {pending.front()};
        std::vector<BatchCandidate> rest;
        for (size_t i = 1; i < pending.size(); ++i)
          (batch.size() < kMaxMembers && readyFor(pending[i], batch.front()) ? batch : rest)
              .push_back(pending[i]);
        if (batch.size() > 1) batches.push_back(std::move(batch));
        pending = std::move(rest);
      }
    }
    // Numbered in program order: %batch0 is the first to move.
    std::sort(batches.begin(), batches.end(),
              [](const Batch& a, const Batch& b) { return consumedFirst(a.front(), b.front()); });
    return batches;
  }

 private:
  void addCandidate(Op* copy, size_t index) {
    static const std::vector<Op*> kNone;
    auto it = readers_.find(copy->result);
    const std::vector<Op*>& readers = it == readers_.end() ? kNone : it->second;
    if (isBatchedTransfer(*copy, readers)) return;
    if (readers.empty() && !outputs_.count(copy->result)) return;  // dead: not ours to move
    BatchCandidate candidate = {copy, index, nullptr, graph_.ops().size()};
    for (Op* reader : readers) {
      size_t at = index_.at(reader);
      if (at < candidate.consumerIndex) candidate = {copy, index, reader, at};
    }
    groups_[groupOf(*copy)].push_back(candidate);
  }

  // frontier_[i * streams + s]: the last op of stream s that op i is ordered after (-1: none).
  void computeFrontiers() {
    const std::vector<Op*>& ops = graph_.ops();
    StreamNumbering streams;
    streamOfOp_.assign(ops.size(), -1);
    for (size_t i = 0; i < ops.size(); ++i)
      if (ops[i]->kind != OpKind::Param) streamOfOp_[i] = streams.numberOf(*ops[i]);
    streams_ = static_cast<size_t>(streams.count());
    frontier_.assign(ops.size() * streams_, -1);
    for (size_t i = 0; i < ops.size(); ++i) {
      if (streamOfOp_[i] < 0) continue;  // params are resident: nothing orders them
      int64_t* row = &frontier_[i * streams_];
      for (const Value* operand : ops[i]->operands) {
        const Op* producer = operand->producer;
        if (!producer || producer->kind == OpKind::Param) continue;
        const int64_t* from = &frontier_[index_.at(producer) * streams_];
        for (size_t s = 0; s < streams_; ++s) row[s] = std::max(row[s], from[s]);
      }
      row[streamOfOp_[i]] = static_cast<int64_t>(i);
    }
  }

  // Whether the leader's batch point already waits for the candidate's source.
  bool readyFor(const BatchCandidate& candidate, const BatchCandidate& leader) const {
    const Op* producer = candidate.copy->operands[0]->producer;
    if (!producer || !leader.consumer) return true;
    size_t at = index_.at(producer);
    // A param is resident from the start, but the pack must follow its op in program order
    // (a training step's params may be defined after the batch point).
    if (producer->kind == OpKind::Param) return at < leader.consumerIndex;
    return frontier_[leader.consumerIndex * streams_ + streamOfOp_[at]] >= static_cast<int64_t>(at);
  }

  const Graph& graph_;
  std::unordered_map<const Op*, size_t> index_;
  std::unordered_map<const Value*, std::vector<Op*>> readers_;
  std::unordered_set<const Value*> outputs_;
  std::map<GroupKey, std::vector<BatchCandidate>> groups_;
  std::vector<int> streamOfOp_;
  size_t streams_ = 0;
  std::vector<int64_t> frontier_;
};

// Whether the batch reads a copy that a batch of this round replaces, as a source or as its
// batch point: it waits for the next round, which sees the graph as it is then.
bool readsMovingCopy(const Batch& batch, const std::unordered_set<const Op*>& moving) {
  if (batch.front().consumer && moving.count(batch.front().consumer)) return true;
  return std::any_of(batch.begin(), batch.end(), [&](const BatchCandidate& member) {
    return moving.count(member.copy->operands[0]->producer) != 0;
  });
}

}  // namespace

bool BatchTransfersPass::run(Graph& graph, const PassContext& context) const {
  for (const Op* op : graph.ops())
    GXC_CHECK(!op->attrs.has("stream"), "batch-transfers after assign-streams: '{}' is scheduled",
              op->layerName());
  BatchWriter writer(graph);
  bool changed = false;
  for (;;) {
    std::vector<Batch> batches = Analysis(graph, context.target.costs).formBatches();
    std::unordered_set<const Op*> moving;
    for (const Batch& batch : batches)
      for (const BatchCandidate& member : batch) moving.insert(member.copy);
    std::vector<const Batch*> ready;
    for (const Batch& batch : batches)
      if (!readsMovingCopy(batch, moving)) ready.push_back(&batch);
    // None when no batch forms, or (only with copies of copies going back and forth) when
    // every batch waits for another: what is left moves as it is.
    if (ready.empty()) return changed;
    BatchRound round(graph);
    for (const Batch* batch : ready) writer.write(*batch, round);
    changed = true;
  }
}

}  // namespace gxc
