// Reference kernels of matmul (torch.matmul on 2-D and batched operands, with optional
// transposes) and linear (nn.Linear: y = x W^T + b). Dot products accumulate in double, and
// are stored as such for f64 (rounded through f32 for the other dtypes, as their GEMMs do).
#include "ir/diagnostic.h"
#include "runtime/reference/reference_kernels.h"

namespace gxc::reference {
namespace {

// An operand of matmul seen as a stack of matrices: leading dims are batch dims, the last
// two are rows and columns, swapped when the operand is transposed.
struct MatrixStack {
  const Tensor* tensor;
  bool transposed;
  Shape batch;
  int64_t rows;
  int64_t cols;

  MatrixStack(const Op& op, const Tensor& t, bool transpose) : tensor(&t), transposed(transpose) {
    GXC_CHECK(t.rank() >= 2, "layer '{}': matmul operand of rank {}", op.layerName(), t.rank());
    batch.assign(t.shape().begin(), t.shape().end() - 2);
    int64_t storedRows = t.shape()[t.rank() - 2];
    int64_t storedCols = t.shape()[t.rank() - 1];
    rows = transposed ? storedCols : storedRows;
    cols = transposed ? storedRows : storedCols;
  }

  // Element (row, col) of the matrix that broadcasting pairs with batch coordinates
  // `outBatch` of the result.
  double at(const Coords& outBatch, int64_t row, int64_t col) const {
    int64_t matrix = broadcastIndex(outBatch, batch);
    int64_t within = transposed ? col * rows + row : row * cols + col;
    return tensor->loadDouble(matrix * rows * cols + within);
  }
};

}  // namespace

Tensor matmulOp(const Op& op, const Operands& operands) {
  checkOperandCount(op, operands, 2, 2);
  checkFloatOperands(op, operands, {0, 1});
  MatrixStack a(op, *operands[0], op.attrs.getBool("transpose_a", false));
  MatrixStack b(op, *operands[1], op.attrs.getBool("transpose_b", false));
  GXC_CHECK(a.cols == b.rows, "layer '{}': matmul inner dims {} and {}", op.layerName(), a.cols,
            b.rows);
  Shape batch = broadcastShapes(op, a.batch, b.batch);
  Shape shape = batch;
  shape.push_back(a.rows);
  shape.push_back(b.cols);
  Tensor result = makeResult(op, shape);
  int64_t batchCount = result.numel() / (a.rows * b.cols);
  for (int64_t n = 0; n < batchCount; ++n) {
    Coords batchCoords = unravelIndex(n, batch);
    for (int64_t i = 0; i < a.rows; ++i) {
      for (int64_t j = 0; j < b.cols; ++j) {
        double dot = 0.0;
        for (int64_t k = 0; k < a.cols; ++k)
          dot += a.at(batchCoords, i, k) * b.at(batchCoords, k, j);
        storeComputed(result, (n * a.rows + i) * b.cols + j, dot);
      }
    }
  }
  return result;
}

Tensor linearOp(const Op& op, const Operands& operands) {
  // The bias is present exactly when it is passed as a third operand.
  checkOperandCount(op, operands, 2, 3);
  bool hasBias = operands.size() == 3;
  checkFloatOperands(op, operands,
                     hasBias ? std::vector<size_t>{0, 1, 2} : std::vector<size_t>{0, 1});
  const Tensor& x = *operands[0];
  const Tensor& weight = *operands[1];
  GXC_CHECK(x.rank() >= 1 && weight.rank() == 2 && x.shape().back() == weight.shape()[1],
            "layer '{}': linear of {} by weight {}", op.layerName(), shapeString(x.shape()),
            shapeString(weight.shape()));
  int64_t in = weight.shape()[1];
  int64_t out = weight.shape()[0];
  if (hasBias)
    GXC_CHECK(operands[2]->shape() == Shape{out}, "layer '{}': linear bias {} for {} outputs",
              op.layerName(), shapeString(operands[2]->shape()), out);
  Shape shape = x.shape();
  shape.back() = out;
  Tensor result = makeResult(op, shape);
  // Every leading dim of x is a batch dim: x is a stack of rows of `in` features, counted
  // from the result, since `in` may be 0 (an empty sum: the bias, or zeros).
  int64_t rows = out == 0 ? 0 : result.numel() / out;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t o = 0; o < out; ++o) {
      double dot = 0.0;
      for (int64_t k = 0; k < in; ++k)
        dot += x.loadDouble(r * in + k) * weight.loadDouble(o * in + k);
      if (hasBias) dot += operands[2]->loadDouble(o);
      storeComputed(result, r * out + o, dot);
    }
  }
  return result;
}

}  // namespace gxc::reference
