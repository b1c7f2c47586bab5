#include "ir/pool_geometry.h"

#include <algorithm>

#include "ir/conv_geometry.h"
#include "ir/diagnostic.h"
#include "ir/infer_type_rules.h"

namespace gxc {
namespace {

using infer::fail;

// ATen's pooling_output_shape (dilation 1): with ceil_mode a last window that would start in
// the right padding (or past it) is dropped, so every window holds at least one input element.
// Requires a kernel that fits the padded input, so that the division is of a non-negative.
int64_t pooledSize(int64_t in, int64_t kernel, int64_t stride, int64_t pad, bool ceilMode) {
  int64_t out = (in + 2 * pad - kernel + (ceilMode ? stride - 1 : 0)) / stride + 1;
  if (ceilMode && (out - 1) * stride >= in + pad) --out;
  return out;
}

// The input rows (or columns) the windows of all `out` outputs read along one axis, each
// window clipped to the input.
double clippedWindowTotal(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t pad) {
  double total = 0;
  for (int64_t o = 0; o < out; ++o) {
    int64_t start = o * stride - pad;
    total += static_cast<double>(std::min(start + kernel, in) - std::max<int64_t>(start, 0));
  }
  return total;
}

}  // namespace

bool isPool2d(OpKind kind) {
  return kind == OpKind::MaxPool2d || kind == OpKind::AvgPool2d ||
         kind == OpKind::AdaptiveAvgPool2d;
}

bool isPool2dBackward(OpKind kind) {
  return kind == OpKind::MaxPool2dBackward || kind == OpKind::AvgPool2dBackward;
}

PoolGeometry pool2dGeometry(const Op& op) {
  GXC_CHECK(isPool2d(op.kind) || isPool2dBackward(op.kind), "'{}' is not a 2-d pool",
            op.layerName());
  const TensorType& x = op.operands[0]->type;
  if (x.rank() != 3 && x.rank() != 4)
    fail(op, "needs x of shape [N, C, H, W] or [C, H, W], got {}", x.withoutDevice());
  PoolGeometry g;
  g.inH = x.shape[x.rank() - 2];
  g.inW = x.shape[x.rank() - 1];
  g.planes = x.shape[0] * (x.rank() == 4 ? x.shape[1] : 1);
  if (op.kind == OpKind::AdaptiveAvgPool2d) {
    g.adaptive = true;
    std::tie(g.outH, g.outW) = attrPairOrFail(op, "output_size", 0, 1);
    return g;
  }
  std::tie(g.kernelH, g.kernelW) = attrPairOrFail(op, "kernel_size", 0, 1);
  // PyTorch's stride=None: the windows tile the input without overlap.
  std::tie(g.strideH, g.strideW) =
      op.attrs.has("stride") ? attrPairOrFail(op, "stride", 0, 1) : std::pair{g.kernelH, g.kernelW};
  std::tie(g.padH, g.padW) = attrPairOrFail(op, "padding", 0, 0);
  if (g.padH > g.kernelH / 2 || g.padW > g.kernelW / 2)
    fail(op, "padding [{}, {}] must be at most half of kernel_size [{}, {}]", g.padH, g.padW,
         g.kernelH, g.kernelW);
  const int64_t paddedH = g.inH + 2 * g.padH, paddedW = g.inW + 2 * g.padW;
  if (g.kernelH > paddedH || g.kernelW > paddedW)
    fail(op, "kernel_size [{}, {}] is larger than x {} padded to [{}, {}]", g.kernelH, g.kernelW,
         x.withoutDevice(), paddedH, paddedW);
  const bool ceilMode = op.attrs.getBool("ceil_mode", false);
  g.outH = pooledSize(g.inH, g.kernelH, g.strideH, g.padH, ceilMode);
  g.outW = pooledSize(g.inW, g.kernelW, g.strideW, g.padW, ceilMode);
  g.countIncludePad = op.attrs.getBool("count_include_pad", true);
  return g;
}

Shape pool2dResultShape(const Op& op, const PoolGeometry& g) {
  Shape shape = op.operands[0]->type.shape;
  shape[shape.size() - 2] = g.outH;
  shape[shape.size() - 1] = g.outW;
  return shape;
}

Shape inferPool2dShape(const Op& op) {
  const TensorType& x = op.operands[0]->type;
  Shape pooled = pool2dResultShape(op, pool2dGeometry(op));
  if (!isPool2dBackward(op.kind)) return pooled;
  const TensorType& dy = op.operands[1]->type;
  GXC_CHECK(dy.known, "operand 1 of '{}' has no inferred type", op.layerName());
  if (dy.shape != pooled || dy.dtype != x.dtype)
    fail(op, "dy is {}, but the pool of x {} is {}{}", dy.withoutDevice(), x.withoutDevice(),
         dtypeName(x.dtype), shapeString(pooled));
  return x.shape;
}

double pool2dWindowElements(const PoolGeometry& g) {
  double rows = 0, columns = 0;
  if (g.adaptive) {
    for (int64_t o = 0; o < g.outH; ++o)
      rows += static_cast<double>(adaptiveWindowEnd(o, g.inH, g.outH) -
                                  adaptiveWindowStart(o, g.inH, g.outH));
    for (int64_t o = 0; o < g.outW; ++o)
      columns += static_cast<double>(adaptiveWindowEnd(o, g.inW, g.outW) -
                                     adaptiveWindowStart(o, g.inW, g.outW));
  } else {
    rows = clippedWindowTotal(g.inH, g.outH, g.kernelH, g.strideH, g.padH);
    columns = clippedWindowTotal(g.inW, g.outW, g.kernelW, g.strideW, g.padW);
  }
  return static_cast<double>(g.planes) * rows * columns;
}

}  // namespace gxc
