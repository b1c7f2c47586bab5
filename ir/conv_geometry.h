// The geometry of a conv2d: its kernel, strides, paddings, dilations and groups read from the
// op's attributes (each an int or an [h, w] pair, padding also `same`), and its output size.
// Every layer (shape inference, the reference, the generated kernel, the host's oneDNN call,
// the cost model) reads it from here, so that they agree on PyTorch's rules:
//   out = floor((in + pad_before + pad_after - dilation * (kernel - 1) - 1) / stride) + 1
// and `same` (stride 1 only) pads dilation * (kernel - 1) in all, the odd one on the
// bottom/right, as torch does. A conv_transpose2d (the gradient of a conv2d with respect to
// its input, nn.ConvTranspose2d) maps back the other way, so its in and out sizes swap roles:
//   out = (in - 1) * stride - 2 * padding + dilation * (kernel - 1) + output_padding + 1
// and its weight is [in_channels, out_channels / groups, kh, kw].
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ir/graph.h"

namespace gxc {

struct ConvGeometry {
  int64_t batch = 0, inChannels = 0, outChannels = 0, groups = 1;
  int64_t inH = 0, inW = 0, outH = 0, outW = 0;
  int64_t kernelH = 1, kernelW = 1, strideH = 1, strideW = 1, dilationH = 1, dilationW = 1;
  int64_t padTop = 0, padLeft = 0, padBottom = 0, padRight = 0;
  int64_t outputPadH = 0, outputPadW = 0;  // conv_transpose2d only: added on the bottom/right
  bool bias = false;
};

// Requires a conv2d whose operand types are known. Attribute values or shapes that do not fit
// (x not [N, C, H, W] with C = in_channels, groups not dividing the channels, a kernel larger
// than the padded input, `same` with a stride) are the model's error, reported at the layer.
ConvGeometry conv2dGeometry(const Op& op);
// The same for a conv_transpose2d; also the model's error: an output_padding not smaller than
// the stride or the dilation (torch's rule), an output of no pixels.
ConvGeometry convTranspose2dGeometry(const Op& op);

// An int or [h, w] attribute as a pair; nullopt for a list that is not of two entries.
std::optional<std::pair<int64_t, int64_t>> attrPair(const Attrs& attrs, const std::string& name,
                                                    int64_t fallback);
// The same, with both entries at least `least`; anything else is the model's error at the
// layer (the pools of ir/pool_geometry.h read their pairs with it too).
std::pair<int64_t, int64_t> attrPairOrFail(const Op& op, const std::string& name, int64_t fallback,
                                           int64_t least);

}  // namespace gxc
