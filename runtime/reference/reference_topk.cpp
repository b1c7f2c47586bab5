// Reference kernel of `topk` and `topk_indices`: torch.topk(x, k, dim=axis, largest,
// sorted=True), the values and their positions along the axis. Each line along the axis is
// sorted whole (a stable sort: the lower index first among equals, where torch leaves the
// order of ties unspecified) and its first k kept. NaN counts as larger than every number, as
// in torch: first with `largest`, last without. Integers compare as integers, exactly.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "ir/diagnostic.h"
#include "runtime/reference/reference_kernels.h"

namespace gxc::reference {
namespace {

// Whether element a comes strictly before element b in the order topk gives.
template <typename T>
bool comesBefore(T a, T b, bool largest) {
  if constexpr (std::is_floating_point_v<T>) {
    bool aNan = std::isnan(a), bNan = std::isnan(b);
    if (aNan || bNan) return largest ? aNan && !bNan : bNan && !aNan;
  }
  return largest ? a > b : a < b;
}

template <typename T, typename Load>
std::vector<int64_t> sortedPositions(int64_t size, bool largest, Load load) {
  std::vector<T> line(static_cast<size_t>(size));
  for (int64_t j = 0; j < size; ++j) line[static_cast<size_t>(j)] = load(j);
  std::vector<int64_t> order(static_cast<size_t>(size));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return comesBefore(line[static_cast<size_t>(a)], line[static_cast<size_t>(b)], largest);
  });
  return order;
}

}  // namespace

Tensor topkOp(const Op& op, const Operands& operands) {
  checkOperandCount(op, operands, 1, 1);
  const Tensor& x = *operands[0];
  GXC_CHECK(x.dtype() != DType::Bool, "layer '{}': topk of bool", op.layerName());
  int64_t axis = normalizeAxis(op, op.attrs.getInt("axis", -1), x.rank());
  int64_t k = op.attrs.getInt("k", 0), size = x.shape()[axis];
  GXC_CHECK(k > 0 && k <= size, "layer '{}': k = {} of an axis of {}", op.layerName(), k, size);
  bool largest = op.attrs.getBool("largest", true);
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < x.rank(); ++d) inner *= x.shape()[d];
  int64_t lines = x.numel() / size;
  Shape shape = x.shape();
  shape[axis] = k;
  Tensor result = makeResult(op, shape);

  for (int64_t line = 0; line < lines; ++line) {
    // Element j of the line is x[start + j * inner]; result element j is out[outStart + ...].
    int64_t start = line / inner * size * inner + line % inner;
    int64_t outStart = line / inner * k * inner + line % inner;
    std::vector<int64_t> order =
        isInteger(x.dtype())
            ? sortedPositions<int64_t>(size, largest,
                                       [&](int64_t j) { return x.loadInt(start + j * inner); })
            : sortedPositions<double>(size, largest,
                                      [&](int64_t j) { return x.loadDouble(start + j * inner); });
    for (int64_t j = 0; j < k; ++j) {
      int64_t position = order[static_cast<size_t>(j)];
      if (op.kind == OpKind::TopkIndices)
        result.storeInt(outStart + j * inner, position);
      else  // the element itself, bit for bit
        copyElement(x, start + position * inner, result, outStart + j * inner);
    }
  }
  return result;
}

}  // namespace gxc::reference
