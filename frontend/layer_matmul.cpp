// `matmul` layers as torch.matmul takes them: a 1-D operand (a vector: [1, K] on the left,
// [K, 1] on the right, the added dim dropped from the result; both 1-D is a dot, 0-d) and batch
// dims of any rank that broadcast (NumPy's rules on all but the last two dims). The IR's matmul
// keeps the narrower contract its backends implement (2-D, or 3-D stacks whose batch is equal
// or 1; ir/infer_type.cpp), so such a layer is lowered here to views around one such matmul:
// reshapes making a vector a row or a column and merging the batch dims into one, an `expand`
// (a copy) only for an operand whose batch dims must be repeated, and a reshape of the result
// to torch's shape. Layers the IR's matmul already takes are left as one op, unchanged. The ops it
// adds are named after the layer (`h.a`, `h.b`, `h.mm`); the layer's name is its result.
#include <fmt/ranges.h>

#include "frontend/model_builder.h"
#include "ir/infer_type.h"

namespace gxc {
namespace {

int64_t product(const Shape& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// Batch dims of an operand, left-padded with 1s to `rank`.
Shape padded(const Shape& batch, size_t rank) {
  Shape out(rank - batch.size(), 1);
  out.insert(out.end(), batch.begin(), batch.end());
  return out;
}

}  // namespace

bool ModelBuilder::matmulIsLowered(const std::vector<Value*>& inputs) const {
  const Shape &a = inputs[0]->type.shape, &b = inputs[1]->type.shape;
  auto plain = [](const Shape& s) { return s.size() == 2 || s.size() == 3; };
  if (!plain(a) || !plain(b)) return true;
  // Two stacks: the IR broadcasts a batch of 1 only.
  return a.size() == 3 && b.size() == 3 && a[0] != b[0] && a[0] != 1 && b[0] != 1;
}

Value* ModelBuilder::lowerMatmul(const YamlNode& layer, const std::string& name,
                                 const std::vector<Value*>& inputs, const Attrs& attrs,
                                 const Device& place) {
  const TensorType &a = inputs[0]->type, &b = inputs[1]->type;
  bool transposeA = attrs.getBool("transpose_a", false);
  bool transposeB = attrs.getBool("transpose_b", false);
  // The IR's matmul checks these too, but would name the op it is lowered to, not the layer.
  if (a.dtype != b.dtype)
    reader_.fail(layer, "layer '{}': matmul: operand dtypes differ: {} and {}", name,
                 a.withoutDevice(), b.withoutDevice());
  if (!isFloat(a.dtype))
    reader_.fail(layer, "layer '{}': matmul needs f32, f64, f16 or bf16 operands, got {} and {}",
                 name, a.withoutDevice(), b.withoutDevice());
  if (a.rank() == 0 || b.rank() == 0)
    reader_.fail(layer, "layer '{}': matmul needs operands of at least 1 dim, got {} and {}", name,
                 a.withoutDevice(), b.withoutDevice());
  // torch.matmul has no transposes; on a vector, which of its dims would be swapped is moot.
  if ((transposeA && a.rank() == 1) || (transposeB && b.rank() == 1))
    reader_.fail(layer, "layer '{}': matmul: transpose_{} of a 1-D operand ({}) has no meaning",
                 name, transposeA && a.rank() == 1 ? "a" : "b",
                 (transposeA && a.rank() == 1 ? a : b).withoutDevice());

  // The matrices: a vector a is one row, a vector b one column.
  Shape sa = a.rank() == 1 ? Shape{1, a.shape[0]} : a.shape;
  Shape sb = b.rank() == 1 ? Shape{b.shape[0], 1} : b.shape;
  Shape batchA(sa.begin(), sa.end() - 2), batchB(sb.begin(), sb.end() - 2);
  int64_t rowsA = sa[sa.size() - 2], colsA = sa.back(), rowsB = sb[sb.size() - 2],
          colsB = sb.back();
  int64_t m = transposeA ? colsA : rowsA, k = transposeA ? rowsA : colsA;
  int64_t kb = transposeB ? colsB : rowsB, n = transposeB ? rowsB : colsB;
  if (k != kb)
    reader_.fail(layer, "layer '{}': matmul: inner dimensions differ: {} @ {} ({} vs {})", name,
                 a.withoutDevice(), b.withoutDevice(), k, kb);
  std::optional<Shape> batch = broadcastShapes(batchA, batchB);
  if (!batch)
    reader_.fail(layer, "layer '{}': matmul: batch dimensions of {} and {} cannot be broadcast",
                 name, a.withoutDevice(), b.withoutDevice());

  SourceLoc loc = reader_.loc(layer);
  auto append = [&](OpKind kind, std::vector<Value*> operands, const std::string& result,
                    Attrs opAttrs) {
    if (result != name) define(result, layer);
    Op* op = graph_->appendOp(kind, std::move(operands), result,
                              TensorType{false, DType::F32, {}, place}, std::move(opAttrs), loc);
    op->result->type = inferResultType(*op);
    return op->result;
  };
  auto reshaped = [&](Value* value, const Shape& shape, const std::string& result) {
    if (value->type.shape == shape) return value;
    Attrs reshape;
    reshape.set("shape", std::vector<int64_t>(shape.begin(), shape.end()));
    return append(OpKind::Reshape, {value}, result, reshape);
  };
  // Each operand as the IR's matmul takes it: 2-D when its batch is all 1s (it broadcasts),
  // else [batch, rows, cols] with the full batch, repeated by an expand where it broadcasts.
  int64_t count = product(*batch);
  auto operand = [&](Value* value, const Shape& matrix, const Shape& own, const char* tag) {
    int64_t rows = matrix[matrix.size() - 2], cols = matrix.back();
    std::string result = fmt::format("{}.{}", name, tag);
    if (product(own) == 1) return reshaped(value, {rows, cols}, result);
    if (padded(own, batch->size()) != *batch) {
      Shape full = *batch;
      full.push_back(rows);
      full.push_back(cols);
      value = reshaped(value, matrix, result + "_matrix");
      Attrs expand;
      expand.set("shape", std::vector<int64_t>(full.begin(), full.end()));
      value = append(OpKind::Expand, {value}, result + "_expanded", expand);
    }
    return reshaped(value, {count, rows, cols}, result);
  };
  Value* left = operand(inputs[0], sa, batchA, "a");
  Value* right = operand(inputs[1], sb, batchB, "b");
  Attrs matmulAttrs;
  if (transposeA) matmulAttrs.set("transpose_a", true);
  if (transposeB) matmulAttrs.set("transpose_b", true);
  Value* result = append(OpKind::Matmul, {left, right}, name + ".mm", matmulAttrs);
  // torch's shape: the batch, then m unless a was a vector, n unless b was.
  Shape shape = *batch;
  if (a.rank() > 1) shape.push_back(m);
  if (b.rank() > 1) shape.push_back(n);
  Attrs reshape;
  reshape.set("shape", std::vector<int64_t>(shape.begin(), shape.end()));
  return append(OpKind::Reshape, {result}, name, reshape);
}

}  // namespace gxc
