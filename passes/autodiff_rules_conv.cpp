// Gradient rules of conv2d, conv_transpose2d and the pools, out of the forward ops: a conv2d's
// input gradient is the conv_transpose2d of dy (nn.ConvTranspose2d is defined as that
// gradient) and a conv_transpose2d's the conv2d of dy; either's weight gradient is a conv2d of
// one of x and dy by the other with batch and channels swapped (the roles of stride and
// dilation swap too; a grouped one's groups stay groups), the bias gradient a sum. max_pool2d
// and avg_pool2d have backward ops of their own (max_pool2d_backward, avg_pool2d_backward:
// ATen's tie-breaking, overlapping and padded windows, ceil_mode); an adaptive pool whose
// windows tile the input spreads each window's gradient evenly over it.
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

// v [N, C, H, W] as [C/G, G N, H, W]: group g's channels (g, n) of sample n, for a grouped
// convolution over the batch (with one group, batch and channels swapped).
Value* groupsAsChannels(GradBuilder& b, Value* v, int64_t groups) {
  if (groups == 1) return swapBatchAndChannels(b, v);
  const Shape& s = v->type.shape;
  int64_t perGroup = s[1] / groups;
  Attrs perm;
  perm.set("perm", std::vector<int64_t>{2, 1, 0, 3, 4});
  Value* split = b.reshape(v, {s[0], groups, perGroup, s[2], s[3]});
  return b.reshape(b.op(OpKind::Transpose, {split}, perm), {perGroup, groups * s[0], s[2], s[3]});
}

// The weight gradient of a convolution of geometry `g` whose taps are `image` (padded, at g's
// stride and dilation) times `kernelOf`, summed over the batch: `image` grouped as channels,
// convolved by `kernelOf` as [channels, N, ...] with stride and dilation swapped, cropped to
// the kernel, batch and channels swapped back.
Value* weightGradient(GradBuilder& b, Value* image, Value* kernelOf, const ConvGeometry& g) {
  const Shape& k = kernelOf->type.shape;
  Attrs attrs = convAttrs(g.groups * image->type.shape[0], k[1], pair(k[2], k[3]),
                          pair(g.dilationH, g.dilationW), pair(g.padTop, g.padLeft),
                          pair(g.strideH, g.strideW));
  if (g.groups != 1) attrs.set("groups", g.groups);
  Value* full =
      b.op(OpKind::Conv2d,
           {groupsAsChannels(b, image, g.groups), swapBatchAndChannels(b, kernelOf)}, attrs);
  return swapBatchAndChannels(b, leading(b, leading(b, full, 2, g.kernelH), 3, g.kernelW));
}

std::vector<Value*> conv2dGradients(GradBuilder& b, Value* dy, const std::vector<bool>& need) {
  const Op& op = b.forward();
  ConvGeometry g = conv2dGeometry(op);
  if (g.padTop != g.padBottom || g.padLeft != g.padRight)
    refuseGradient(op,
                   "the gradient with uneven padding (`same` with an even kernel) is not built "
                   "yet");
  std::vector<Value*> grads(op.operands.size(), nullptr);
  if (need[0]) {
    Attrs attrs = convAttrs(g.outChannels, g.inChannels, pair(g.kernelH, g.kernelW),
                            pair(g.strideH, g.strideW), pair(g.padTop, g.padLeft),
                            pair(g.dilationH, g.dilationW));
    if (g.groups != 1) attrs.set("groups", g.groups);  // the weight is [out, in/groups, ...]
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
  // dW[o, i, kh, kw] = sum over n, y, x of dy[n, o, y, x] xpad[n, i, y s + kh d, x s + kw d].
  if (need[1]) grads[1] = weightGradient(b, op.operands[0], dy, g);
  if (op.operands.size() > 2 && need[2]) {
    Attrs attrs;
    attrs.set("axis", std::vector<int64_t>{0, 2, 3});
    grads[2] = b.op(OpKind::Sum, {dy}, attrs);
  }
  return grads;
}

// conv_transpose2d, the adjoint of conv2d: dx is the conv2d of dy by the same weight (its
// [in, out/groups] layout is conv2d's [out, in/groups] the other way round), cropped where
// output_padding added rows; dW[i, o, kh, kw] = sum of x[n, i, y, x] dypad[n, o, y s + kh d,
// x s + kw d], conv2d's weight gradient with x and dy in each other's place.
std::vector<Value*> convTranspose2dGradients(GradBuilder& b, Value* dy,
                                             const std::vector<bool>& need) {
  const Op& op = b.forward();
  ConvGeometry g = convTranspose2dGeometry(op);
  std::vector<Value*> grads(op.operands.size(), nullptr);
  if (need[0]) {
    Attrs attrs = convAttrs(g.outChannels, g.inChannels, pair(g.kernelH, g.kernelW),
                            pair(g.strideH, g.strideW), pair(g.padTop, g.padLeft),
                            pair(g.dilationH, g.dilationW));
    if (g.groups != 1) attrs.set("groups", g.groups);
    Value* dx = b.op(OpKind::Conv2d, {dy, op.operands[1]}, attrs);
    grads[0] = leading(b, leading(b, dx, 2, g.inH), 3, g.inW);
  }
  if (need[1]) grads[1] = weightGradient(b, dy, op.operands[0], g);
  if (op.operands.size() > 2 && need[2]) {
    Attrs attrs;
    attrs.set("axis", std::vector<int64_t>{0, 2, 3});
    grads[2] = b.op(OpKind::Sum, {dy}, attrs);
  }
  return grads;
}

// max_pool2d and avg_pool2d: their backward op, with the pool's attributes.
Value* poolGradient(GradBuilder& b, Value* dy) {
  const Op& op = b.forward();
  OpKind kind =
      op.kind == OpKind::MaxPool2d ? OpKind::MaxPool2dBackward : OpKind::AvgPool2dBackward;
  return b.op(kind, {op.operands[0], dy}, op.attrs);
}

// adaptive_avg_pool2d whose windows tile the input (the output divides the input): each
// window's gradient spread evenly over it.
Value* adaptivePoolGradient(GradBuilder& b, Value* dy) {
  const Op& op = b.forward();
  PoolGeometry g = pool2dGeometry(op);
  const Shape& shape = op.operands[0]->type.shape;
  if (g.inH % g.outH != 0 || g.inW % g.outW != 0)
    refuseGradient(op,
                   "the gradient of overlapping adaptive windows (an output size that does not "
                   "divide the input) is not built yet");
  int64_t kernelH = g.inH / g.outH, kernelW = g.inW / g.outW;
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
  spread = b.reshape(spread, withLead({g.inH, g.inW}));
  return b.scalarOp(OpKind::Mul, spread, 1.0 / static_cast<double>(kernelH * kernelW));
}

}  // namespace

std::optional<std::vector<Value*>> convGradients(GradBuilder& builder, Value* dy,
                                                 const std::vector<bool>& needed) {
  switch (builder.forward().kind) {
    case OpKind::Conv2d:
      return conv2dGradients(builder, dy, needed);
    case OpKind::ConvTranspose2d:
      return convTranspose2dGradients(builder, dy, needed);
    case OpKind::MaxPool2d:
    case OpKind::AvgPool2d:
      return std::vector<Value*>{poolGradient(builder, dy)};
    case OpKind::AdaptiveAvgPool2d:
      return std::vector<Value*>{adaptivePoolGradient(builder, dy)};
    default:
      return std::nullopt;
  }
}

}  // namespace gxc
