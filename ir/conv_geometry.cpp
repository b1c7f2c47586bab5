#include "ir/conv_geometry.h"

#include "ir/diagnostic.h"
#include "ir/infer_type_rules.h"

namespace gxc {

using infer::fail;

std::pair<int64_t, int64_t> attrPairOrFail(const Op& op, const std::string& name, int64_t fallback,
                                           int64_t least) {
  auto pair = attrPair(op.attrs, name, fallback);
  if (!pair) fail(op, "{} must be an integer or a list of two", name);
  if (pair->first < least || pair->second < least)
    fail(op, "{} must be at least {}, got [{}, {}]", name, least, pair->first, pair->second);
  return *pair;
}

std::optional<std::pair<int64_t, int64_t>> attrPair(const Attrs& attrs, const std::string& name,
                                                    int64_t fallback) {
  const AttrValue* found = attrs.find(name);
  if (found && attrKind(*found) == AttrKind::IntList) {
    const auto& list = std::get<std::vector<int64_t>>(*found);
    if (list.size() != 2) return std::nullopt;
    return std::pair{list[0], list[1]};
  }
  int64_t value = attrs.getInt(name, fallback);
  return std::pair{value, value};
}

namespace {

// What conv2d and conv_transpose2d read alike: channels, groups, kernel, stride, dilation and
// x's shape.
ConvGeometry commonGeometry(const Op& op) {
  const TensorType& x = op.operands[0]->type;
  ConvGeometry g;
  g.inChannels = op.attrs.getInt("in_channels", 0);
  g.outChannels = op.attrs.getInt("out_channels", 0);
  g.groups = op.attrs.getInt("groups", 1);
  g.bias = op.attrs.getBool("bias", true);
  if (g.inChannels <= 0 || g.outChannels <= 0 || g.groups <= 0)
    fail(op, "in_channels, out_channels and groups must be positive, got {}, {} and {}",
         g.inChannels, g.outChannels, g.groups);
  if (g.inChannels % g.groups != 0 || g.outChannels % g.groups != 0)
    fail(op, "groups = {} must divide in_channels = {} and out_channels = {}", g.groups,
         g.inChannels, g.outChannels);
  std::tie(g.kernelH, g.kernelW) = attrPairOrFail(op, "kernel_size", 0, 1);
  std::tie(g.strideH, g.strideW) = attrPairOrFail(op, "stride", 1, 1);
  std::tie(g.dilationH, g.dilationW) = attrPairOrFail(op, "dilation", 1, 1);
  if (x.rank() != 4) fail(op, "needs x of shape [N, C, H, W], got {}", x.withoutDevice());
  g.batch = x.shape[0];
  g.inH = x.shape[2];
  g.inW = x.shape[3];
  if (x.shape[1] != g.inChannels)
    fail(op, "x {} has {} channels, in_channels is {}", x.withoutDevice(), x.shape[1],
         g.inChannels);
  return g;
}

}  // namespace

ConvGeometry convTranspose2dGeometry(const Op& op) {
  GXC_CHECK(op.kind == OpKind::ConvTranspose2d, "'{}' is not a conv_transpose2d", op.layerName());
  ConvGeometry g = commonGeometry(op);
  auto [padH, padW] = attrPairOrFail(op, "padding", 0, 0);
  g.padTop = g.padBottom = padH;
  g.padLeft = g.padRight = padW;
  std::tie(g.outputPadH, g.outputPadW) = attrPairOrFail(op, "output_padding", 0, 0);
  if ((g.outputPadH >= g.strideH && g.outputPadH >= g.dilationH) ||
      (g.outputPadW >= g.strideW && g.outputPadW >= g.dilationW))
    fail(op,
         "output_padding [{}, {}] must be smaller than either the stride [{}, {}] or the "
         "dilation [{}, {}]",
         g.outputPadH, g.outputPadW, g.strideH, g.strideW, g.dilationH, g.dilationW);
  g.outH = (g.inH - 1) * g.strideH - 2 * padH + g.dilationH * (g.kernelH - 1) + g.outputPadH + 1;
  g.outW = (g.inW - 1) * g.strideW - 2 * padW + g.dilationW * (g.kernelW - 1) + g.outputPadW + 1;
  if (g.outH <= 0 || g.outW <= 0)
    fail(op, "x {} gives an output of [{}, {}] pixels: the padding removes more than there is",
         op.operands[0]->type.withoutDevice(), g.outH, g.outW);
  return g;
}

ConvGeometry conv2dGeometry(const Op& op) {
  GXC_CHECK(op.kind == OpKind::Conv2d, "'{}' is not a conv2d", op.layerName());
  const TensorType& x = op.operands[0]->type;
  ConvGeometry g = commonGeometry(op);
  const int64_t spanH = g.dilationH * (g.kernelH - 1) + 1;
  const int64_t spanW = g.dilationW * (g.kernelW - 1) + 1;
  const AttrValue* padding = op.attrs.find("padding");
  const bool word = padding && attrKind(*padding) == AttrKind::String;
  if (word && op.attrs.getString("padding", "") != "same")
    fail(op, "padding must be an integer, a list of two or `same`, got '{}'",
         op.attrs.getString("padding", ""));
  if (word) {
    if (g.strideH != 1 || g.strideW != 1)
      fail(op, "padding `same` needs stride 1, got [{}, {}]", g.strideH, g.strideW);
    g.padTop = (spanH - 1) / 2;
    g.padBottom = spanH - 1 - g.padTop;
    g.padLeft = (spanW - 1) / 2;
    g.padRight = spanW - 1 - g.padLeft;
  } else {
    auto [padH, padW] = attrPairOrFail(op, "padding", 0, 0);
    g.padTop = g.padBottom = padH;
    g.padLeft = g.padRight = padW;
  }
  const int64_t paddedH = g.inH + g.padTop + g.padBottom;
  const int64_t paddedW = g.inW + g.padLeft + g.padRight;
  if (spanH > paddedH || spanW > paddedW)
    fail(op, "kernel of extent [{}, {}] (dilation included) is larger than x {} padded to [{}, {}]",
         spanH, spanW, x.withoutDevice(), paddedH, paddedW);
  g.outH = (paddedH - spanH) / g.strideH + 1;
  g.outW = (paddedW - spanW) / g.strideW + 1;
  return g;
}

}  // namespace gxc
