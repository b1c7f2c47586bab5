// Reference kernels of the format 1.1 data movement ops that copy elements to new places:
// expand, triu and tril. Bit for bit, never through float, so every dtype moves unchanged.
#include "ir/diagnostic.h"
#include "runtime/reference/reference_kernels.h"

namespace gxc::reference {

Tensor expandOp(const Op& op, const Operands& operands) {
  checkOperandCount(op, operands, 1, 1);
  const Tensor& x = *operands[0];
  const std::vector<int64_t> wanted = *op.attrs.getIntList("shape");
  GXC_CHECK(wanted.size() >= static_cast<size_t>(x.rank()), "layer '{}': expand of {} to {}",
            op.layerName(), shapeString(x.shape()), shapeString(wanted));
  // x's dims align with the last ones of `shape`; -1 keeps x's size there.
  size_t lead = wanted.size() - static_cast<size_t>(x.rank());
  Shape shape(wanted.begin(), wanted.end());
  for (size_t d = lead; d < shape.size(); ++d)
    if (shape[d] == -1) shape[d] = x.shape()[d - lead];
  Tensor result = makeResult(op, shape);
  // An expanded dim of x has size 1, where broadcasting reads its only element.
  for (int64_t i = 0; i < result.numel(); ++i)
    copyElement(x, broadcastIndex(unravelIndex(i, shape), x.shape()), result, i);
  return result;
}

Tensor triangleOp(const Op& op, const Operands& operands) {
  checkOperandCount(op, operands, 1, 1);
  const Tensor& x = *operands[0];
  GXC_CHECK(x.rank() >= 2, "layer '{}': {} of {}", op.layerName(), opName(op.kind),
            shapeString(x.shape()));
  int64_t diagonal = op.attrs.getInt("diagonal", 0);
  bool upper = op.kind == OpKind::Triu;
  Tensor result = makeResult(op, x.shape());  // zero-filled: the elements left out stay 0
  int64_t rows = x.shape()[x.rank() - 2], cols = x.shape()[x.rank() - 1];
  // Element (r, c) of each matrix is kept where c - r >= diagonal (triu) or <= diagonal (tril).
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t r = (i / cols) % rows, c = i % cols;
    if (upper ? c - r >= diagonal : c - r <= diagonal) copyElement(x, i, result, i);
  }
  return result;
}

}  // namespace gxc::reference
