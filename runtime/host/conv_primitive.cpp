#include "runtime/host/conv_primitive.h"

#include <memory>
#include <optional>
#include <tuple>

#include "ir/diagnostic.h"
#include "runtime/host/onednn_engine.h"

namespace gxc {
namespace {

using dnnl::memory;

// What a convolution primitive depends on: its geometry, whether it is transposed, and the
// post-ops it applies.
using ConvKey = std::tuple<bool, std::vector<int64_t>, PostOpShape, bool, bool, bool>;

ConvKey keyOf(bool transposed, const ConvGeometry& g, const PostOpShape& post,
              const ConvLayouts& layouts) {
  return {transposed,
          {g.batch,      g.inChannels, g.outChannels, g.groups,  g.inH,       g.inW,
           g.outH,       g.outW,       g.kernelH,     g.kernelW, g.strideH,   g.strideW,
           g.dilationH,  g.dilationW,  g.padTop,      g.padLeft, g.padBottom, g.padRight,
           g.outputPadH, g.outputPadW, g.bias ? 1 : 0},
          post,
          layouts.imageChannelsLast,
          layouts.resultChannelsLast,
          layouts.residualChannelsLast};
}

// A reorder from `from` to `to`, or an empty one when they are the same layout.
dnnl::reorder reorderBetween(const memory::desc& from, const memory::desc& to) {
  if (from == to) return {};
  const dnnl::engine& engine = oneDnnEngine();
  return dnnl::reorder(dnnl::reorder::primitive_desc(engine, from, engine, to));
}

// The post-ops of `post` into `attr`, residuals read in the layout `residual`.
void appendPostOps(const PostOpShape& post, const memory::desc& residual, PreparedConv& c,
                   dnnl::primitive_attr& attr) {
  c.src1.clear(), c.src1PostOp.clear();
  if (post.empty()) return;
  const memory::desc perChannel({1, residual.dims()[1], 1, 1}, memory::data_type::f32,
                                memory::format_tag::nchw);
  dnnl::post_ops ops;
  const auto binary = [&](dnnl::algorithm algorithm, const memory::desc& src1) {
    c.src1PostOp.push_back(ops.len());
    c.src1.push_back(src1);
    ops.append_binary(algorithm, src1);
  };
  for (char member : post) {
    if (member == 'f') continue;  // in the weights and bias, not a post-op
    if (member == 'b') {
      binary(dnnl::algorithm::binary_mul, perChannel);
      binary(dnnl::algorithm::binary_add, perChannel);
    } else if (member == 'r') {
      ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    } else {
      GXC_CHECK(member == 'a', "unknown convolution post-op '{}'", member);
      binary(dnnl::algorithm::binary_add, residual);
    }
  }
  attr.set_post_ops(ops);
}

// The primitive for `post`, its activations and residuals in the layout `activations`, or
// in the ones oneDNN picks.
// With `make` false, only its descriptors and implementation's name: what oneDNN would pick.
PreparedConv prepareWith(bool transposed, const ConvGeometry& g, const PostOpShape& post,
                         const ConvLayouts& layouts, std::optional<memory::format_tag> activations,
                         bool make) {
  const auto f32 = memory::data_type::f32;
  const auto any = memory::format_tag::any;
  PreparedConv c;
  const memory::dims srcDims{g.batch, g.inChannels, g.inH, g.inW};
  const memory::dims dstDims{g.batch, g.outChannels, g.outH, g.outW};
  // oneDNN's weights are logically [out, in, kh, kw], grouped [groups, out/groups, in/groups,
  // kh, kw], for both. PyTorch's conv2d weight [out, in/groups, kh, kw] has those bytes (oihw,
  // goihw); its conv_transpose2d weight [in, out/groups, kh, kw] is the same with in and out
  // swapped (iohw, giohw).
  const memory::dims weightDims =
      g.groups == 1 ? memory::dims{g.outChannels, g.inChannels, g.kernelH, g.kernelW}
                    : memory::dims{g.groups, g.outChannels / g.groups, g.inChannels / g.groups,
                                   g.kernelH, g.kernelW};
  const auto weightLayout =
      g.groups == 1 ? (transposed ? memory::format_tag::iohw : memory::format_tag::oihw)
                    : (transposed ? memory::format_tag::giohw : memory::format_tag::goihw);
  const auto plain = [](bool channelsLast) {
    return channelsLast ? memory::format_tag::nhwc : memory::format_tag::nchw;
  };
  c.plainSrc = memory::desc(srcDims, f32, plain(layouts.imageChannelsLast));
  c.plainDst = memory::desc(dstDims, f32, plain(layouts.resultChannelsLast));
  c.residual = memory::desc(dstDims, f32, plain(layouts.residualChannelsLast));
  c.plainWeights = memory::desc(weightDims, f32, weightLayout);
  c.bias = memory::desc({g.outChannels}, f32, memory::format_tag::a);
  const memory::desc src(srcDims, f32, activations.value_or(any));
  const memory::desc dst(dstDims, f32, activations.value_or(any));
  const memory::desc weights(weightDims, f32, any);
  const memory::dims strides{g.strideH, g.strideW};
  // oneDNN counts dilation from 0 (no gap), PyTorch from 1.
  const memory::dims dilates{g.dilationH - 1, g.dilationW - 1};
  // A transposed convolution's output_padding adds rows on the bottom/right: oneDNN takes it as
  // that much less padding on that side.
  const memory::dims padBefore{g.padTop, g.padLeft};
  const memory::dims padAfter{g.padBottom - g.outputPadH, g.padRight - g.outputPadW};
  const auto inference = dnnl::prop_kind::forward_inference;
  const dnnl::engine& engine = oneDnnEngine();
  dnnl::primitive_attr attr = userScratchpad();
  appendPostOps(post, activations ? dst : c.residual, c, attr);
  if (transposed) {
    const auto direct = dnnl::algorithm::deconvolution_direct;
    auto desc = g.bias
                    ? dnnl::deconvolution_forward::desc(inference, direct, src, weights, c.bias,
                                                        dst, strides, dilates, padBefore, padAfter)
                    : dnnl::deconvolution_forward::desc(inference, direct, src, weights, dst,
                                                        strides, dilates, padBefore, padAfter);
    dnnl::deconvolution_forward::primitive_desc pd(desc, attr, engine);
    c.src = pd.src_desc(), c.weights = pd.weights_desc(), c.dst = pd.dst_desc();
    c.scratchpad = pd.scratchpad_desc();
    c.implementation = pd.impl_info_str();
    if (make) c.primitive = dnnl::deconvolution_forward(pd);
  } else {
    const auto direct = dnnl::algorithm::convolution_direct;
    // A batch_norm folded into the weights brings its shift as the bias.
    const bool bias = g.bias || (!post.empty() && post[0] == 'f');
    auto desc = bias ? dnnl::convolution_forward::desc(inference, direct, src, weights, c.bias, dst,
                                                       strides, dilates, padBefore, padAfter)
                     : dnnl::convolution_forward::desc(inference, direct, src, weights, dst,
                                                       strides, dilates, padBefore, padAfter);
    dnnl::convolution_forward::primitive_desc pd(desc, attr, engine);
    c.src = pd.src_desc(), c.weights = pd.weights_desc(), c.dst = pd.dst_desc();
    c.scratchpad = pd.scratchpad_desc();
    c.implementation = pd.impl_info_str();
    if (make) c.primitive = dnnl::convolution_forward(pd);
  }
  if (!make) return c;
  c.srcIn = reorderBetween(c.plainSrc, c.src);
  c.weightsIn = reorderBetween(c.plainWeights, c.weights);
  c.dstOut = reorderBetween(c.dst, c.plainDst);
  return c;
}

// The layout a primitive with a residual add is pinned to: the first of the candidates that
// one of oneDNN's JIT kernels takes, or none. A residual add (a binary post-op without
// broadcast) with the layouts left to oneDNN sends it to its im2col GEMM on NCHW, ten times
// slower for resnet_cifar's convolutions; with the activations fixed to a blocked layout its
// direct JIT convolutions take it: the channels in blocks of 16 or 8 where they fill them (at 8
// channels, 16-blocks leave only its reference code and NHWC a JIT kernel a third slower than
// without the residual, by DNNL_VERBOSE), else NHWC. Only primitive descriptors are made here:
// the primitive, its JIT code, only for the layout chosen.
std::optional<memory::format_tag> residualLayout(bool transposed, const ConvGeometry& g,
                                                 const PostOpShape& post,
                                                 const ConvLayouts& layouts) {
  std::vector<memory::format_tag> candidates{memory::format_tag::acdb};
  if (g.groups == 1 && g.inChannels % 8 == 0 && g.outChannels % 8 == 0)
    candidates.insert(candidates.begin(), memory::format_tag::nChw8c);
  if (g.groups == 1 && g.inChannels % 16 == 0 && g.outChannels % 16 == 0)
    candidates.insert(candidates.begin(), memory::format_tag::nChw16c);
  // Activations already channels-last are read and written as they are: no reorders.
  if (layouts.imageChannelsLast || layouts.resultChannelsLast || layouts.residualChannelsLast)
    candidates.insert(candidates.begin(), memory::format_tag::acdb);
  for (memory::format_tag layout : candidates) {
    const std::string implementation =
        prepareWith(transposed, g, post, layouts, layout, false).implementation;
    if (implementation.rfind("jit", 0) == 0 || implementation.rfind("brg", 0) == 0) return layout;
  }
  return std::nullopt;
}

PreparedConv prepare(bool transposed, const ConvGeometry& g, const PostOpShape& post,
                     const ConvLayouts& layouts) {
  std::optional<memory::format_tag> pinned;
  if (post.find('a') != PostOpShape::npos) {
    pinned = residualLayout(transposed, g, post, layouts);
    if (!pinned) {
      PreparedConv refused;
      refused.postOpsTaken = false;
      return refused;
    }
  }
  // The residual is reordered into the pinned layout at each call unless it is in it already.
  PreparedConv c = prepareWith(transposed, g, post, layouts, pinned, true);
  for (const memory::desc& src1 : c.src1)
    c.src1In.push_back(src1.dims() == c.plainDst.dims() ? reorderBetween(c.residual, src1)
                                                        : dnnl::reorder());
  return c;
}

}  // namespace

const PreparedConv& preparedConv(bool transposed, const ConvGeometry& g, const PostOpShape& post,
                                 const ConvLayouts& layouts) {
  static PreparedPrimitives<ConvKey, PreparedConv> prepared;
  return prepared.get(keyOf(transposed, g, post, layouts),
                      [&] { return prepare(transposed, g, post, layouts); });
}

bool residualPostOpsTaken(const ConvGeometry& g, const PostOpShape& post) {
  return residualLayout(false, g, post, {}).has_value();
}

}  // namespace gxc
