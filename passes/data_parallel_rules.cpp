#include "passes/data_parallel_rules.h"

#include <algorithm>

#include "ir/infer_type.h"

namespace gxc {
namespace {

bool isBatched(const std::vector<bool>& batched, size_t operand) {
  return operand < batched.size() && batched[operand];
}

// An unbatched operand of an op whose result has dim 0 = the batch: every row of the result
// reads all of it (it broadcasts over dim 0), so every device can read it whole.
bool broadcastsOverRows(const TensorType& operand, int64_t resultRank) {
  return operand.rank() < resultRank || operand.shape[0] == 1;
}

bool axisIsRows(int64_t axis, int64_t rank) { return normalizeAxis(axis, rank) == 0; }

// NumPy broadcasting: a batched operand must span the result's dim 0 itself (same rank), and
// an unbatched one must broadcast over it.
bool elementwiseIsRowWise(const Op& op, const std::vector<bool>& batched) {
  int64_t rank = op.result->type.rank();
  for (size_t i = 0; i < op.operands.size(); ++i) {
    const TensorType& type = op.operands[i]->type;
    if (isBatched(batched, i) ? type.rank() != rank : !broadcastsOverRows(type, rank)) return false;
  }
  return true;
}

// 2-D: x @ W with the batch as x's rows (not W @ x, whose batched dim 0 is the contraction).
// 3-D: a stack of matrices whose stack dim is the batch, against one matrix or a stack of one.
bool matmulIsRowWise(const Op& op, const std::vector<bool>& batched) {
  if (op.result->type.rank() == 2)
    return isBatched(batched, 0) && !isBatched(batched, 1) &&
           !op.attrs.getBool("transpose_a", false);
  for (size_t i = 0; i < 2; ++i) {
    const TensorType& type = op.operands[i]->type;
    if (isBatched(batched, i) ? type.rank() != 3 : !(type.rank() == 2 || type.shape[0] == 1))
      return false;
  }
  return true;
}

// Ops whose result keeps the batch as its dim 0: whether row r of the result depends only on
// row r of every batched operand.
bool rowWise(const Op& op, const std::vector<bool>& batched) {
  const TensorType& x = op.operands[0]->type;
  auto onlyFirstBatched = [&] {
    for (size_t i = 1; i < op.operands.size(); ++i)
      if (isBatched(batched, i)) return false;
    return isBatched(batched, 0);
  };
  if (isElementwiseUnary(op.kind) || op.kind == OpKind::LogicalNot || op.kind == OpKind::Cast)
    return true;
  if (isElementwise(op.kind)) return elementwiseIsRowWise(op, batched);
  if (isReduction(op.kind)) return true;  // batchRole has sent reductions over dim 0 elsewhere
  switch (op.kind) {
    case OpKind::Matmul:
      return matmulIsRowWise(op, batched);
    case OpKind::Linear:  // nn.Linear treats every leading dim as a batch dim
      return onlyFirstBatched() && x.rank() >= 2;
    case OpKind::LayerNorm:  // normalizes over the last dims only
    case OpKind::RmsNorm:
      return onlyFirstBatched() &&
             x.rank() > static_cast<int64_t>(normalizedShapeOf(op.attrs, x.shape).size());
    case OpKind::GroupNorm:  // per sample
      return onlyFirstBatched();
    case OpKind::BatchNorm:  // at inference: per element, with the running statistics
      return onlyFirstBatched();
    case OpKind::Dropout:  // the identity, or a mask per element (the step count is 0-d)
      return onlyFirstBatched();
    case OpKind::Softmax:
    case OpKind::LogSoftmax:
      return !axisIsRows(op.attrs.getInt("axis", -1), x.rank());
    case OpKind::Reshape:
      // Row-major: when dim 0 stays the same, row r stays the same elements, regrouped.
      return true;
    case OpKind::Transpose: {
      auto perm = op.attrs.getIntList("perm");
      return perm ? axisIsRows((*perm)[0], x.rank()) : x.rank() == 1;
    }
    case OpKind::Concat:
    case OpKind::Slice: {
      for (size_t i = 0; i < op.operands.size(); ++i)
        if (!isBatched(batched, i)) return false;
      return !axisIsRows(op.attrs.getInt("axis", 0), x.rank());
    }
    // Views and copies that keep dim 0 where it is: not a squeeze that may drop it (a shard of
    // one row would lose it), not a dim inserted before it, not a flatten that merges it.
    case OpKind::Squeeze:
      return op.attrs.has("axis") && !axisIsRows(op.attrs.getInt("axis", 0), x.rank());
    case OpKind::Unsqueeze:
      return normalizeAxis(op.attrs.getInt("axis", 0), x.rank() + 1).value_or(0) != 0;
    case OpKind::Flatten:
      return !axisIsRows(op.attrs.getInt("start_dim", 0), x.rank());
    case OpKind::Expand: {
      // Only with -1 for dim 0: a shard has fewer rows than a size written out.
      const std::vector<int64_t> shape = *op.attrs.getIntList("shape");
      return static_cast<int64_t>(shape.size()) == x.rank() && shape[0] == -1;
    }
    case OpKind::Triu:
    case OpKind::Tril:  // on the last two dims: rows are a batch dim before them
      return x.rank() >= 3;
    case OpKind::IndexSelect:  // picks along another axis, the same for every row
      return onlyFirstBatched() && !axisIsRows(op.attrs.getInt("axis", 0), x.rank());
    case OpKind::OneHot:  // a row of classes per index
      return onlyFirstBatched();
    case OpKind::Cumsum:  // sums along another axis than the rows
      return !axisIsRows(op.attrs.getInt("axis", 0), x.rank());
    case OpKind::Topk:  // picks along another axis than the rows; along them, runs whole
    case OpKind::TopkIndices:
      return !axisIsRows(op.attrs.getInt("axis", -1), x.rank());
    case OpKind::Pad: {  // pairs for the last dims first: none of them may pad dim 0
      const std::vector<int64_t> pads = *op.attrs.getIntList("pad");
      size_t pairOfRows = static_cast<size_t>(x.rank() - 1);
      return pads.size() / 2 <= pairOfRows ||
             (pads[2 * pairOfRows] == 0 && pads[2 * pairOfRows + 1] == 0);
    }
    case OpKind::Repeat: {  // dim 0 repeated once, and no new dim before it
      const std::vector<int64_t> repeats = *op.attrs.getIntList("repeats");
      return static_cast<int64_t>(repeats.size()) == x.rank() && repeats[0] == 1;
    }
    case OpKind::Conv2d:  // each sample convolved alone with the same weights
    case OpKind::ConvTranspose2d:
      return onlyFirstBatched();
    case OpKind::MaxPool2d:  // each [H, W] plane pooled alone: a sample (or channel) per row
    case OpKind::AvgPool2d:
    case OpKind::AdaptiveAvgPool2d:
      return onlyFirstBatched();
    case OpKind::MaxPool2dBackward:  // (x, dy): each plane's dy goes back to its plane of x
    case OpKind::AvgPool2dBackward:
      return isBatched(batched, 0) && isBatched(batched, 1);
    case OpKind::Embedding:  // a lookup per index
      return onlyFirstBatched();
    case OpKind::ScaledDotProductAttention: {
      // Batch dims lead q, k and v alike: row r attends within row r when all three are
      // batched, and the mask is too or broadcasts over the batch.
      if (x.rank() < 3) return false;
      for (size_t i = 0; i < 3; ++i)
        if (!isBatched(batched, i)) return false;
      if (op.operands.size() < 4 || isBatched(batched, 3)) return true;
      const TensorType& mask = op.operands[3]->type;
      return mask.rank() < x.rank() || mask.shape[0] == 1;
    }
    case OpKind::To:
      return true;
    default:
      return false;
  }
}

}  // namespace

std::vector<RowRange> chunkRows(int64_t rows, int64_t parts) {
  GXC_CHECK(rows > 0 && parts > 0, "chunking {} rows into {} parts", rows, parts);
  int64_t chunk = (rows + parts - 1) / parts;
  std::vector<RowRange> ranges;
  for (int64_t start = 0; start < rows; start += chunk)
    ranges.push_back({start, std::min(rows, start + chunk)});
  return ranges;
}

BatchRole batchRole(const Op& op, const std::vector<bool>& batched) {
  int64_t rows = -1;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    if (!isBatched(batched, i)) continue;
    int64_t n = op.operands[i]->type.shape.at(0);
    // Batches of different sizes are cut differently: rows do not line up across devices.
    if (rows >= 0 && n != rows) return BatchRole::Whole;
    rows = n;
  }
  if (rows < 0) return BatchRole::Unbatched;
  switch (op.kind) {
    case OpKind::Sum:
    case OpKind::Mean:
    case OpKind::Max:
    case OpKind::Min:
    case OpKind::Prod:
    case OpKind::Logsumexp:
    case OpKind::Argmax:
    case OpKind::Argmin:
    case OpKind::Var:
    case OpKind::Std: {
      // The first six combine per-shard partials (passes/batch_split.cpp); the position of
      // an extreme and the variance do not fold that way, so over the batch they run whole.
      bool combines = op.kind != OpKind::Argmax && op.kind != OpKind::Argmin &&
                      op.kind != OpKind::Var && op.kind != OpKind::Std;
      auto axes = op.attrs.getAxes("axis");
      bool overRows = !axes;  // over every axis, the batch's included
      for (int64_t axis : axes.value_or(std::vector<int64_t>{}))
        overRows |= axisIsRows(axis, op.operands[0]->type.rank());
      if (overRows) return combines ? BatchRole::BatchReduce : BatchRole::Whole;
      break;
    }
    case OpKind::MseLoss:
    case OpKind::L1Loss:
    case OpKind::SmoothL1Loss:
    case OpKind::BceWithLogits:
    case OpKind::CrossEntropy:
    case OpKind::NllLoss: {
      // Prediction and target row by row; a class weight (or pos_weight) is one for every row.
      if (!isBatched(batched, 0) || !isBatched(batched, 1) || isBatched(batched, 2))
        return BatchRole::Whole;
      return op.attrs.getString("reduction", "mean") == "none" ? BatchRole::RowWise
                                                               : BatchRole::BatchReduce;
    }
    default:
      break;
  }
  const Shape& result = op.result->type.shape;
  if (result.empty() || result[0] != rows) return BatchRole::Whole;
  return rowWise(op, batched) ? BatchRole::RowWise : BatchRole::Whole;
}

bool dropAnnotations(Graph& graph, const PassContext& context) {
  bool changed = false;
  bool annotated = false;
  for (Value* input : graph.inputs()) {
    annotated |= input->type.device.isCuda();
    changed |= input->type.device != Device::cpu();
    input->type.device = Device::cpu();
  }
  for (Op* op : graph.ops()) {
    if (op->kind == OpKind::To) {
      // A `to` names its device in an attribute too: it now stays where it runs, which with
      // more than one device is decided below and ends on the first device when it is whole.
      std::string first = context.target.devices.front().device.str();
      changed |= op->attrs.getString("device", first) != first;
      op->attrs.set("device", first);
    }
    if (!op->device().placed()) continue;
    annotated = changed = true;
    op->result->type.device = {};
  }
  if (annotated)
    context.emitNote(
        "data-parallel placement ignores the model's device annotations: every device runs the "
        "whole model on its share of the batch");
  return changed;
}

}  // namespace gxc
