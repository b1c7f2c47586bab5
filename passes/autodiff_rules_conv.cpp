// Gradient rules of conv2d and the average pools, out of the forward ops: a conv2d's input
// gradient is the conv_transpose2d of dy (nn.ConvTranspose2d is defined as that gradient), its
// weight gradient a conv2d of the input by dy with batch and channels swapped (the roles of
// stride and dilation swap too), its bias gradient a sum; a pool whose windows tile the input
// spreads each window's gradient evenly over it.
#include "ir/conv_geometry.h"
#include "ir/pool_geometry.h"
#include "passes/autodiff_rules.h"

namespace gxc {
namespace {

std::vector<int64_t> pair(int64_t h, int64_t w) { return {h, w}; }

// A conv2d's or conv_transpose2d's attributes, without bias; each geometry an [h, w] pair.
Attrs convAttrs(int64_t in, int64_t out, std::vector<int64_t> kernel, std::vector<int64_t> stride,
                std::vector<int64_t> padding, std::vector<int64_t> dilation) {
  Attrs attrs;
  attrs.set("in_channels", in);
  attrs.set("out_channels", out);
  attrs.set("kernel_size", std::move(kernel));
  attrs.set("stride", std::move(stride));
  attrs.set("padding", std::move(padding));
  attrs.set("dilation", std::move(dilation));
  attrs.set("bias", false);
  return attrs;
}

Value* swapBatchAndChannels(GradBuilder& b, Value* x) {
  Attrs attrs;
  attrs.set("perm", std::vector<int64_t>{1, 0, 2, 3});
  return b.op(OpKind::Transpose, {x}, attrs);
}

Value* leading(GradBuilder& b, Value* x, int64_t axis, int64_t size) {
  if (x->type.shape[axis] == size) return x;
  Attrs attrs;
  attrs.set("axis", axis);
  attrs.set("start", int64_t{0});
  attrs.set("end", size);
  return b.op(OpKind::Slice, {x}, attrs);
}

std::vector<Value*> conv2dGradients(GradBuilder& b, Value* dy, const std::vector<bool>& need) {
  const Op& op = b.forward();
  ConvGeometry g = conv2dGeometry(op);
  if (g.groups != 1) refuseGradient(op, "the gradient of a grouped convolution is not built yet");
  if (g.padTop != g.padBottom || g.padLeft != g.padRight)
    refuseGradient(op,
                   "the gradient with uneven padding (`same` with an even kernel) is not built "
                   "yet");
  std::vector<Value*> grads(op.operands.size(), nullptr);
  if (need[0]) {
    Attrs attrs = convAttrs(g.outChannels, g.inChannels, pair(g.kernelH, g.kernelW),
                            pair(g.strideH, g.strideW), pair(g.padTop, g.padLeft),
                            pair(g.dilationH, g.dilationW));
    // The rows and columns the forward's rounding down left out come back as output padding.
    auto left = [](int64_t in, int64_t out, int64_t stride, int64_t pad, int64_t dilation,
                   int64_t kernel) {
      return in - ((out - 1) * stride - 2 * pad + dilation * (kernel - 1) + 1);
    };
    attrs.set("output_padding",
              pair(left(g.inH, g.outH, g.strideH, g.padTop, g.dilationH, g.kernelH),
                   left(g.inW, g.outW, g.strideW, g.padLeft, g.dilationW, g.kernelW)));
    grads[0] = b.op(OpKind::ConvTranspose2d, {dy, op.operands[1]}, attrs);
  }
  if (need[1]) {
    // dW[o, i, kh, kw] = sum over n, y, x of dy[n, o, y, x] xpad[n, i, y s + kh d, x s + kw d]:
    // x as [C, N, H, W] convolved by dy as [O, N, OH, OW], stride d and dilation s, cropped.
    Attrs attrs =
        convAttrs(g.batch, g.outChannels, pair(g.outH, g.outW), pair(g.dilationH, g.dilationW),
                  pair(g.padTop, g.padLeft), pair(g.strideH, g.strideW));
    Value* full =
        b.op(OpKind::Conv2d, {swapBatchAndChannels(b, op.operands[0]), swapBatchAndChannels(b, dy)},
             attrs);
    Value* cropped = leading(b, leading(b, full, 2, g.kernelH), 3, g.kernelW);
    grads[1] = swapBatchAndChannels(b, cropped);
  }
  if (op.operands.size() > 2 && need[2]) {
    Attrs attrs;
    attrs.set("axis", std::vector<int64_t>{0, 2, 3});
    grads[2] = b.op(OpKind::Sum, {dy}, attrs);
  }
  return grads;
}

// avg_pool2d and adaptive_avg_pool2d whose windows tile the input (stride = kernel, no
// padding; an adaptive pool whose output divides the input): each window's gradient spread
// evenly over it, the rows and columns no window reached zero.
Value* averagePoolGradient(GradBuilder& b, Value* dy) {
  const Op& op = b.forward();
  PoolGeometry g = pool2dGeometry(op);
  const Shape& shape = op.operands[0]->type.shape;
  int64_t kernelH = g.kernelH, kernelW = g.kernelW;
  if (g.adaptive) {
    if (g.inH % g.outH != 0 || g.inW % g.outW != 0)
      refuseGradient(op, "the gradient of overlapping adaptive windows is not built yet");
    kernelH = g.inH / g.outH;
    kernelW = g.inW / g.outW;
  } else if (g.strideH != kernelH || g.strideW != kernelW || g.padH != 0 || g.padW != 0 ||
             g.outH * kernelH > g.inH || g.outW * kernelW > g.inW) {
    refuseGradient(op,
                   "the gradient is built for windows that tile the input (stride = "
                   "kernel_size, no padding) only");
  }
  Shape lead(shape.begin(), shape.end() - 2);
  auto withLead = [&](std::vector<int64_t> last) {
    std::vector<int64_t> dims(lead.begin(), lead.end());
    dims.insert(dims.end(), last.begin(), last.end());
    return dims;
  };
  Value* spread = b.reshape(dy, withLead({g.outH, 1, g.outW, 1}));
  Attrs expand;
  expand.set("shape", withLead({g.outH, kernelH, g.outW, kernelW}));
  spread = b.op(OpKind::Expand, {spread}, expand);
  spread = b.reshape(spread, withLead({g.outH * kernelH, g.outW * kernelW}));
  if (g.outH * kernelH != g.inH || g.outW * kernelW != g.inW) {
    Attrs pad;
    pad.set("pad", std::vector<int64_t>{0, g.inW - g.outW * kernelW, 0, g.inH - g.outH * kernelH});
    spread = b.op(OpKind::Pad, {spread}, pad);
  }
  return b.scalarOp(OpKind::Mul, spread, 1.0 / static_cast<double>(kernelH * kernelW));
}

}  // namespace

std::optional<std::vector<Value*>> convGradients(GradBuilder& builder, Value* dy,
                                                 const std::vector<bool>& needed) {
  switch (builder.forward().kind) {
    case OpKind::Conv2d:
      return conv2dGradients(builder, dy, needed);
    case OpKind::AvgPool2d:
    case OpKind::AdaptiveAvgPool2d:
      return std::vector<Value*>{averagePoolGradient(builder, dy)};
    default:
      return std::nullopt;
  }
}

}  // namespace gxc
