// Reference kernels of conv2d and conv_transpose2d: the direct sum over each output's receptive
// field, in double, with the geometry (strides, paddings, dilations, groups) of
// ir/conv_geometry.h. Plain loops on purpose: this is the oracle the oneDNN and generated paths
// are checked against.
#include "ir/conv_geometry.h"
#include "ir/diagnostic.h"
#include "runtime/reference/reference_kernels.h"

namespace gxc::reference {

Tensor conv2dOp(const Op& op, const Operands& operands) {
  checkOperandCount(op, operands, 2, 3);
  checkFloatOperands(
      op, operands,
      operands.size() == 3 ? std::vector<size_t>{0, 1, 2} : std::vector<size_t>{0, 1});
  const ConvGeometry g = conv2dGeometry(op);
  const Tensor& x = *operands[0];
  const Tensor& weight = *operands[1];
  const Tensor* bias = operands.size() == 3 ? operands[2] : nullptr;
  const int64_t groupIn = g.inChannels / g.groups, groupOut = g.outChannels / g.groups;
  GXC_CHECK(weight.shape() == Shape({g.outChannels, groupIn, g.kernelH, g.kernelW}),
            "layer '{}': conv2d weight {}", op.layerName(), shapeString(weight.shape()));
  Tensor result = makeResult(op, {g.batch, g.outChannels, g.outH, g.outW});
  int64_t out = 0;
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t oc = 0; oc < g.outChannels; ++oc) {
      const int64_t firstIn = oc / groupOut * groupIn;
      for (int64_t oy = 0; oy < g.outH; ++oy)
        for (int64_t ox = 0; ox < g.outW; ++ox, ++out) {
          double sum = bias ? bias->loadDouble(oc) : 0.0;
          for (int64_t ic = 0; ic < groupIn; ++ic)
            for (int64_t ky = 0; ky < g.kernelH; ++ky) {
              const int64_t iy = oy * g.strideH - g.padTop + ky * g.dilationH;
              if (iy < 0 || iy >= g.inH) continue;  // zero padding
              for (int64_t kx = 0; kx < g.kernelW; ++kx) {
                const int64_t ix = ox * g.strideW - g.padLeft + kx * g.dilationW;
                if (ix < 0 || ix >= g.inW) continue;
                const int64_t xIndex =
                    ((n * g.inChannels + firstIn + ic) * g.inH + iy) * g.inW + ix;
                const int64_t wIndex = ((oc * groupIn + ic) * g.kernelH + ky) * g.kernelW + kx;
                sum += x.loadDouble(xIndex) * weight.loadDouble(wIndex);
              }
            }
          storeComputed(result, out, sum);
        }
    }
  return result;
}

// Each output gathers the inputs whose scatter through the kernel lands on it: input pixel iy
// reaches output oy = iy * stride - padding + ky * dilation, so oy comes from
// iy = (oy + padding - ky * dilation) / stride where that divides exactly.
Tensor convTranspose2dOp(const Op& op, const Operands& operands) {
  checkOperandCount(op, operands, 2, 3);
  checkFloatOperands(
      op, operands,
      operands.size() == 3 ? std::vector<size_t>{0, 1, 2} : std::vector<size_t>{0, 1});
  const ConvGeometry g = convTranspose2dGeometry(op);
  const Tensor& x = *operands[0];
  const Tensor& weight = *operands[1];
  const Tensor* bias = operands.size() == 3 ? operands[2] : nullptr;
  const int64_t groupIn = g.inChannels / g.groups, groupOut = g.outChannels / g.groups;
  GXC_CHECK(weight.shape() == Shape({g.inChannels, groupOut, g.kernelH, g.kernelW}),
            "layer '{}': conv_transpose2d weight {}", op.layerName(), shapeString(weight.shape()));
  Tensor result = makeResult(op, {g.batch, g.outChannels, g.outH, g.outW});
  // The input coordinate that kernel tap k of output o reads, or -1 where none does.
  auto source = [](int64_t o, int64_t k, int64_t pad, int64_t dilation, int64_t stride,
                   int64_t size) -> int64_t {
    const int64_t t = o + pad - k * dilation;
    if (t < 0 || t % stride != 0 || t / stride >= size) return -1;
    return t / stride;
  };
  int64_t out = 0;
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t oc = 0; oc < g.outChannels; ++oc) {
      const int64_t firstIn = oc / groupOut * groupIn, ocInGroup = oc % groupOut;
      for (int64_t oy = 0; oy < g.outH; ++oy)
        for (int64_t ox = 0; ox < g.outW; ++ox, ++out) {
          double sum = bias ? bias->loadDouble(oc) : 0.0;
          for (int64_t ic = firstIn; ic < firstIn + groupIn; ++ic)
            for (int64_t ky = 0; ky < g.kernelH; ++ky) {
              const int64_t iy = source(oy, ky, g.padTop, g.dilationH, g.strideH, g.inH);
              if (iy < 0) continue;
              for (int64_t kx = 0; kx < g.kernelW; ++kx) {
                const int64_t ix = source(ox, kx, g.padLeft, g.dilationW, g.strideW, g.inW);
                if (ix < 0) continue;
                const int64_t xIndex = ((n * g.inChannels + ic) * g.inH + iy) * g.inW + ix;
                const int64_t wIndex =
                    ((ic * groupOut + ocInGroup) * g.kernelH + ky) * g.kernelW + kx;
                sum += x.loadDouble(xIndex) * weight.loadDouble(wIndex);
              }
            }
          storeComputed(result, out, sum);
        }
    }
  return result;
}

}  // namespace gxc::reference
