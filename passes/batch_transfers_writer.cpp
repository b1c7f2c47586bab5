#include "passes/batch_transfers_writer.h"

#include <algorithm>
#include <utility>

namespace gxc {
namespace {

std::string deviceSuffix(const Device& device) {
  std::string suffix = device.str();
  suffix.erase(std::remove(suffix.begin(), suffix.end(), ':'), suffix.end());
  return suffix;
}

// Whether the values stack along dim 0 as they are (same dims after the first), so no piece
// needs a reshape on either side.
bool stacksAlongDim0(const Batch& batch) {
  const Shape& first = batch.front().copy->result->type.shape;
  return std::all_of(batch.begin(), batch.end(), [&](const BatchCandidate& member) {
    const Shape& shape = member.copy->result->type.shape;
    return !shape.empty() && !first.empty() &&
           std::equal(shape.begin() + 1, shape.end(), first.begin() + 1, first.end());
  });
}

}  // namespace

BatchRound::BatchRound(const Graph& graph) : readers(graph.usersByValue()) {
  const std::vector<Op*>& ops = graph.ops();
  for (size_t i = 0; i < ops.size(); ++i) position[ops[i]] = i;
  for (size_t i = 0; i < graph.outputs().size(); ++i)
    outputs[graph.outputs()[i].value].push_back(i);
}

void BatchWriter::write(const Batch& batch, const BatchRound& round) {
  const BatchCandidate& leader = batch.front();
  const Device from = sourceDevice(*leader.copy), to = leader.copy->device();
  const DType dtype = leader.copy->result->type.dtype;
  const bool stacked = stacksAlongDim0(batch);
  Op* packAt = packPoint(batch, round);
  std::vector<Value*> pieces;
  int64_t length = 0;
  for (const BatchCandidate& member : batch) {
    Value* source = member.copy->operands[0];
    if (!stacked && source->type.rank() != 1) {
      Attrs flat;
      flat.set("shape", std::vector<int64_t>{-1});
      source = insert(packAt, OpKind::Reshape, source, graph_.uniqueName(source->name + ".flat"),
                      TensorType::of(dtype, {source->type.numel()}, from), flat, member.copy->loc);
    }
    pieces.push_back(source);
    length += source->type.shape[0];
  }
  Shape packedShape = pieces.front()->type.shape;
  packedShape[0] = length;
  std::string name = nextBatchName();
  Op* pack = graph_.insertOpBefore(packAt, OpKind::Concat, pieces, name,
                                   TensorType::of(dtype, packedShape, from), {}, leader.copy->loc);
  Value* moved = insert(leader.consumer, OpKind::Copy, pack->result,
                        graph_.uniqueName(name + "." + deviceSuffix(to)),
                        TensorType::of(dtype, packedShape, to), {}, leader.copy->loc);
  int64_t offset = 0;
  for (size_t i = 0; i < batch.size(); ++i) {
    unpack(batch[i].copy, moved, offset, pieces[i]->type.shape[0], leader.consumer, round);
    offset += pieces[i]->type.shape[0];
  }
}

Value* BatchWriter::insert(Op* before, OpKind kind, Value* operand, const std::string& name,
                           TensorType type, Attrs attrs, const SourceLoc& loc) {
  return graph_
      .insertOpBefore(before, kind, {operand}, name, std::move(type), std::move(attrs), loc)
      ->result;
}

// Right after the last source is defined (a param too: resident, but its op must come first),
// past the params that follow (they order nothing).
// Ops that earlier batches of the round put after that source count as after it too, so
// the walk goes through the graph as it is now, from the source the round's view finds.
Op* BatchWriter::packPoint(const Batch& batch, const BatchRound& round) const {
  const Op* last = nullptr;
  for (const BatchCandidate& member : batch) {
    const Op* producer = member.copy->operands[0]->producer;
    if (producer && (!last || round.position.at(producer) > round.position.at(last)))
      last = producer;
  }
  Op* at = last ? graph_.nextOp(last) : (graph_.ops().empty() ? nullptr : graph_.ops().front());
  while (at && at->kind == OpKind::Param) at = graph_.nextOp(at);
  return at;
}

std::string BatchWriter::nextBatchName() {
  while (graph_.find("batch" + std::to_string(nextBatch_))) ++nextBatch_;
  return "batch" + std::to_string(nextBatch_++);
}

// Replaces `copy` by rows [offset, offset + length) of `moved`, reshaped back to its shape
// if it was flattened; the result keeps the copy's name, so its readers see no change.
void BatchWriter::unpack(Op* copy, Value* moved, int64_t offset, int64_t length, Op* before,
                         const BatchRound& round) {
  const std::string name = copy->result->name;
  const TensorType type = copy->result->type;
  const SourceLoc loc = copy->loc;
  // Its readers let go of it for a moment, so that it can be erased and its name reused.
  std::vector<std::pair<Op*, size_t>> readers;
  if (auto it = round.readers.find(copy->result); it != round.readers.end())
    for (Op* op : it->second)
      for (size_t i = 0; i < op->operands.size(); ++i)
        if (op->operands[i] == copy->result) readers.emplace_back(op, i);
  static const std::vector<size_t> kNoOutputs;
  auto found = round.outputs.find(copy->result);
  const std::vector<size_t>& outputs = found == round.outputs.end() ? kNoOutputs : found->second;
  for (auto [op, i] : readers) op->operands[i] = moved;
  for (size_t i : outputs) graph_.setOutputValue(i, moved);
  graph_.eraseOp(copy);

  Attrs rows;
  rows.set("start", offset);
  rows.set("end", offset + length);
  bool reshaped = moved->type.rank() == 1 && type.rank() != 1;
  Shape sliced = type.shape;
  if (reshaped) sliced = {length};
  Value* piece =
      insert(before, OpKind::Slice, moved, reshaped ? graph_.uniqueName(name + ".flat") : name,
             TensorType::of(type.dtype, sliced, type.device), rows, loc);
  if (reshaped) {
    Attrs back;
    back.set("shape", type.shape);
    piece = insert(before, OpKind::Reshape, piece, name, type, back, loc);
  }
  for (auto [op, i] : readers) op->operands[i] = piece;
  for (size_t i : outputs) graph_.setOutputValue(i, piece);
}

}  // namespace gxc
