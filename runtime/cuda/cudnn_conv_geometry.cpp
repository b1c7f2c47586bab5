#include "runtime/cuda/cudnn_conv_geometry.h"

#include <fmt/format.h>

#include "ir/conv_geometry.h"
#include "ir/diagnostic.h"

namespace gxc {

bool builtWithCudnn() {
#if GXC_HAVE_CUDNN
  return true;
#else
  return false;
#endif
}

std::array<int64_t, 4> packedStrides(const std::array<int64_t, 4>& dims) {
  std::array<int64_t, 4> strides{};
  int64_t stride = 1;
  for (size_t d = 4; d-- > 0;) {
    strides[d] = stride;
    stride *= dims[d];
  }
  return strides;
}

CudnnConvGeometry cudnnConvGeometry(const Op& op) {
  GXC_CHECK(op.kind == OpKind::Conv2d || op.kind == OpKind::ConvTranspose2d,
            "layer '{}': {} is not a convolution", op.layerName(), opName(op.kind));
  CudnnConvGeometry c;
  c.backwardData = op.kind == OpKind::ConvTranspose2d;
  const ConvGeometry g = c.backwardData ? convTranspose2dGeometry(op) : conv2dGeometry(op);
  c.dtype = op.result->type.dtype;
  c.bias = g.bias;
  c.groups = g.groups;
  c.strides = {g.strideH, g.strideW};
  c.dilations = {g.dilationH, g.dilationW};
  c.padding = {g.padTop, g.padLeft};
  const std::array<int64_t, 4> input{g.batch, g.inChannels, g.inH, g.inW};
  const std::array<int64_t, 4> output{g.batch, g.outChannels, g.outH, g.outW};
  if (c.backwardData) {
    // The forward convolution runs from the transposed conv's output back to its input.
    c.x = output;
    c.y = input;
    c.w = {g.inChannels, g.outChannels / g.groups, g.kernelH, g.kernelW};
  } else {
    c.x = input;
    c.y = output;
    c.w = {g.outChannels, g.inChannels / g.groups, g.kernelH, g.kernelW};
  }
  c.xStrides = packedStrides(c.x);
  c.wStrides = packedStrides(c.w);
  c.yStrides = packedStrides(c.y);

  if (c.dtype != DType::F32 && c.dtype != DType::F16 && c.dtype != DType::BF16) {
    c.generatedBecause =
        fmt::format("cuDNN convolutions here take f32, f16 and bf16, not {}", dtypeName(c.dtype));
  } else if (g.padTop != g.padBottom || g.padLeft != g.padRight) {
    c.generatedBecause = fmt::format(
        "its padding is asymmetric (top {}, bottom {}, left {}, right {}), which cuDNN's "
        "convolutions do not take",
        g.padTop, g.padBottom, g.padLeft, g.padRight);
  } else if (c.backwardData && (g.outputPadH >= g.strideH || g.outputPadW >= g.strideW)) {
    c.generatedBecause = fmt::format(
        "its output_padding ({}, {}) is not smaller than its stride ({}, {}), so cuDNN's "
        "backward-data convolution cannot produce its output size",
        g.outputPadH, g.outputPadW, g.strideH, g.strideW);
  }
  if (c.viaCudnn()) {
    // What cuDNN will check: the forward convolution over x has exactly y's positions.
    for (size_t d = 0; d < 2; ++d) {
      int64_t span = c.x[2 + d] + 2 * c.padding[d] - c.dilations[d] * (c.w[2 + d] - 1) - 1;
      GXC_CHECK(span >= 0 && span / c.strides[d] + 1 == c.y[2 + d],
                "layer '{}': cuDNN's forward convolution over {} positions gives not {}",
                op.layerName(), c.x[2 + d], c.y[2 + d]);
    }
  }
  return c;
}

}  // namespace gxc
