// Reference kernels of max_pool2d, avg_pool2d and adaptive_avg_pool2d: each output visits its
// window of the input plane in plain loops, with the geometry of ir/pool_geometry.h. Averages
// are summed in double. This is the oracle the generated pool kernels are checked against.
// Their backward ops scatter each output's dy into its window as ATen's CPU kernels do (the
// generated kernels gather it instead, one thread per input element).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "ir/diagnostic.h"
#include "ir/pool_geometry.h"
#include "runtime/reference/reference_kernels.h"

namespace gxc::reference {
namespace {

// One output's window along one axis: the input range it reads, and the size its average
// divides by when padding counts (PyTorch clips a ceil_mode window at the right padding).
struct Window {
  int64_t begin = 0, end = 0, paddedSize = 0;
};

Window fixedWindow(int64_t out, int64_t in, int64_t kernel, int64_t stride, int64_t pad) {
  const int64_t start = out * stride - pad;
  const int64_t paddedEnd = std::min(start + kernel, in + pad);
  return {std::max<int64_t>(start, 0), std::min(paddedEnd, in), paddedEnd - start};
}

Window adaptiveWindow(int64_t out, int64_t in, int64_t outSize) {
  const int64_t begin = adaptiveWindowStart(out, in, outSize);
  const int64_t end = adaptiveWindowEnd(out, in, outSize);
  return {begin, end, end - begin};
}

}  // namespace

Tensor pool2dOp(const Op& op, const Operands& operands) {
  checkOperandCount(op, operands, 1, 1);
  checkFloatOperands(op, operands, {0});
  const PoolGeometry g = pool2dGeometry(op);
  const Tensor& x = *operands[0];
  Tensor result = makeResult(op, pool2dResultShape(op, g));
  int64_t out = 0;
  for (int64_t plane = 0; plane < g.planes; ++plane)
    for (int64_t oy = 0; oy < g.outH; ++oy)
      for (int64_t ox = 0; ox < g.outW; ++ox, ++out) {
        const Window rows = g.adaptive ? adaptiveWindow(oy, g.inH, g.outH)
                                       : fixedWindow(oy, g.inH, g.kernelH, g.strideH, g.padH);
        const Window columns = g.adaptive ? adaptiveWindow(ox, g.inW, g.outW)
                                          : fixedWindow(ox, g.inW, g.kernelW, g.strideW, g.padW);
        // max_pool2d pads with -inf, so padding never wins; a NaN in the window wins (torch).
        double best = -std::numeric_limits<double>::infinity(), sum = 0;
        for (int64_t y = rows.begin; y < rows.end; ++y)
          for (int64_t xi = columns.begin; xi < columns.end; ++xi) {
            const double value = x.loadDouble((plane * g.inH + y) * g.inW + xi);
            if (!std::isnan(best) && (value > best || std::isnan(value))) best = value;
            sum += value;
          }
        if (op.kind == OpKind::MaxPool2d) {
          storeComputed(result, out, best);
          continue;
        }
        const int64_t count = g.countIncludePad
                                  ? rows.paddedSize * columns.paddedSize
                                  : (rows.end - rows.begin) * (columns.end - columns.begin);
        storeComputed(result, out, sum / static_cast<double>(count));
      }
  return result;
}

Tensor pool2dBackwardOp(const Op& op, const Operands& operands) {
  checkOperandCount(op, operands, 2, 2);
  checkFloatOperands(op, operands, {0, 1});
  const PoolGeometry g = pool2dGeometry(op);
  const Tensor& x = *operands[0];
  const Tensor& dy = *operands[1];
  std::vector<double> dx(static_cast<size_t>(g.planes * g.inH * g.inW), 0.0);
  int64_t out = 0;
  for (int64_t plane = 0; plane < g.planes; ++plane)
    for (int64_t oy = 0; oy < g.outH; ++oy)
      for (int64_t ox = 0; ox < g.outW; ++ox, ++out) {
        const Window rows = fixedWindow(oy, g.inH, g.kernelH, g.strideH, g.padH);
        const Window columns = fixedWindow(ox, g.inW, g.kernelW, g.strideW, g.padW);
        const int64_t first = plane * g.inH * g.inW;
        const double grad = dy.loadDouble(out);
        if (op.kind == OpKind::AvgPool2dBackward) {
          const int64_t count = g.countIncludePad
                                    ? rows.paddedSize * columns.paddedSize
                                    : (rows.end - rows.begin) * (columns.end - columns.begin);
          for (int64_t y = rows.begin; y < rows.end; ++y)
            for (int64_t xi = columns.begin; xi < columns.end; ++xi)
              dx[first + y * g.inW + xi] += grad / static_cast<double>(count);
          continue;
        }
        // ATen's max_pool2d: the window's first element unless a later one is greater or NaN,
        // so ties go to the first maximal element in row-major order, and NaNs to the last.
        int64_t arg = first + rows.begin * g.inW + columns.begin;
        double best = -std::numeric_limits<double>::infinity();
        for (int64_t y = rows.begin; y < rows.end; ++y)
          for (int64_t xi = columns.begin; xi < columns.end; ++xi) {
            const int64_t at = first + y * g.inW + xi;
            const double value = x.loadDouble(at);
            if (value > best || std::isnan(value)) {
              best = value;
              arg = at;
            }
          }
        dx[arg] += grad;
      }
  Tensor result = makeResult(op, x.shape());
  for (size_t i = 0; i < dx.size(); ++i) storeComputed(result, static_cast<int64_t>(i), dx[i]);
  return result;
}

}  // namespace gxc::reference
