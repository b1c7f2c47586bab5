// Reference kernel of the reductions sum, mean, max, min, prod, argmax, argmin, logsumexp, var
// and std over some axes (all when absent), with or without keeping the reduced dims, as
// torch computes them. Everything accumulates in double, but sum, prod, max and min of i32 and
// i64, which fold in int64 with two's complement wraparound (sum and prod give i64, as torch).
#include <algorithm>
#include <cmath>
#include <limits>

#include "ir/diagnostic.h"
#include "runtime/reference/reference_kernels.h"

namespace gxc::reference {
namespace {

// The first position of the largest (smallest) value; a NaN counts as larger (and smaller)
// than everything, as in torch.argmax and argmin.
int64_t argExtreme(const std::vector<double>& row, bool largest) {
  size_t best = 0;
  for (size_t k = 0; k < row.size(); ++k) {
    if (std::isnan(row[best])) break;
    bool better = largest ? row[k] > row[best] : row[k] < row[best];
    if (std::isnan(row[k]) || better) best = k;
  }
  return static_cast<int64_t>(best);
}

// torch.logsumexp: the max is subtracted for stability, except an infinite one (a row of
// -inf gives -inf, one with +inf gives +inf, rather than inf - inf = NaN).
double logSumExp(const std::vector<double>& row) {
  double max = -std::numeric_limits<double>::infinity();
  for (double v : row)
    if (v > max || std::isnan(v)) max = v;
  if (std::isnan(max)) return max;
  double shift = std::isinf(max) ? 0.0 : max;
  double sum = 0.0;
  for (double v : row) sum += std::exp(v - shift);
  return std::log(sum) + shift;
}

// torch.var: the squared deviations from the mean over max(0, count - correction), which is
// NaN or inf when that is 0, as in torch.
double variance(const std::vector<double>& row, int64_t correction) {
  double mean = 0.0;
  for (double v : row) mean += v;
  mean /= static_cast<double>(row.size());
  double squares = 0.0;
  for (double v : row) squares += (v - mean) * (v - mean);
  int64_t divisor = std::max<int64_t>(0, static_cast<int64_t>(row.size()) - correction);
  return squares / static_cast<double>(divisor);
}

double foldRow(OpKind kind, const std::vector<double>& row, int64_t correction) {
  double acc = 0.0;
  switch (kind) {
    case OpKind::Sum:
    case OpKind::Mean:
      for (double v : row) acc += v;
      return kind == OpKind::Sum ? acc : acc / static_cast<double>(row.size());
    case OpKind::Prod:
      acc = 1.0;
      for (double v : row) acc *= v;
      return acc;
    case OpKind::Max:
    case OpKind::Min: {
      // NaN wins, as torch.max and torch.min propagate it.
      acc = row.front();
      for (double v : row)
        if (std::isnan(v) || (kind == OpKind::Max ? v > acc : v < acc)) acc = v;
      return acc;
    }
    case OpKind::Logsumexp:
      return logSumExp(row);
    case OpKind::Var:
      return variance(row, correction);
    case OpKind::Std:
      return std::sqrt(variance(row, correction));
    default:
      GXC_CHECK(false, "{} is not a reduction", opName(kind));
  }
  return acc;
}

// Through uint64, whose arithmetic is modular: signed overflow is undefined in C++.
int64_t foldIntegerRow(OpKind kind, const std::vector<int64_t>& row) {
  uint64_t acc = kind == OpKind::Prod ? 1 : 0;
  switch (kind) {
    case OpKind::Sum:
      for (int64_t v : row) acc += static_cast<uint64_t>(v);
      return static_cast<int64_t>(acc);
    case OpKind::Prod:
      for (int64_t v : row) acc *= static_cast<uint64_t>(v);
      return static_cast<int64_t>(acc);
    case OpKind::Max:
      return *std::max_element(row.begin(), row.end());
    case OpKind::Min:
      return *std::min_element(row.begin(), row.end());
    default:
      GXC_CHECK(false, "{} of integers", opName(kind));
  }
  return 0;
}

}  // namespace

Tensor reduceOp(const Op& op, const Operands& operands) {
  checkOperandCount(op, operands, 1, 1);
  const Tensor& x = *operands[0];
  const bool integers = isInteger(x.dtype());
  if (!integers) checkFloatOperands(op, operands, {0});
  bool keepdim = op.attrs.getBool("keepdim", false);

  // Which input dims are reduced: every dim when no axis is given. An empty list reduces
  // none, as NumPy reads it (and as shape inference does), not all as torch's `dim=[]`.
  std::vector<bool> reduced(static_cast<size_t>(x.rank()), false);
  std::optional<std::vector<int64_t>> axes = op.attrs.getAxes("axis");
  if (!axes) {
    reduced.assign(reduced.size(), true);
  } else {
    for (int64_t axis : *axes) {
      int64_t d = normalizeAxis(op, axis, x.rank());
      GXC_CHECK(!reduced[d], "layer '{}': axis {} reduced twice", op.layerName(), d);
      reduced[d] = true;
    }
  }

  // The result keeps the other dims in order, and the reduced ones as 1 with keepdim.
  Shape shape;
  for (int64_t d = 0; d < x.rank(); ++d) {
    if (!reduced[d])
      shape.push_back(x.shape()[d]);
    else if (keepdim)
      shape.push_back(1);
  }
  Tensor result = makeResult(op, shape);

  // Each result element's elements, in row-major order of the folded dims: the position in
  // this list is the index argmax and argmin give.
  std::vector<std::vector<double>> rows(static_cast<size_t>(result.numel()));
  std::vector<std::vector<int64_t>> integerRows(integers ? rows.size() : 0);
  for (int64_t i = 0; i < x.numel(); ++i) {
    Coords coords = unravelIndex(i, x.shape());
    Coords outCoords;
    for (int64_t d = 0; d < x.rank(); ++d) {
      if (!reduced[d])
        outCoords.push_back(coords[d]);
      else if (keepdim)
        outCoords.push_back(0);
    }
    size_t row = static_cast<size_t>(ravelIndex(outCoords, shape));
    if (integers)
      integerRows[row].push_back(x.loadInt(i));
    else
      rows[row].push_back(x.loadDouble(i));
  }
  int64_t correction = op.attrs.getInt("correction", 1);
  for (int64_t o = 0; o < result.numel(); ++o) {
    const std::vector<double>& row = rows[static_cast<size_t>(o)];
    if (integers)
      result.storeInt(o, foldIntegerRow(op.kind, integerRows[static_cast<size_t>(o)]));
    else if (op.kind == OpKind::Argmax || op.kind == OpKind::Argmin)
      result.storeInt(o, argExtreme(row, op.kind == OpKind::Argmax));
    else
      storeComputed(result, o, foldRow(op.kind, row, correction));
  }
  return result;
}

}  // namespace gxc::reference
