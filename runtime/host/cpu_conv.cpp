#include "runtime/host/cpu_conv.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "ir/conv_geometry.h"
#include "ir/diagnostic.h"
#include "runtime/host/onednn_engine.h"

namespace gxc {
namespace {

using dnnl::memory;

// Multiply-adds from which a convolution runs in oneDNN's blocked layouts (PreparedConv).
constexpr int64_t kBlockedConvWork = int64_t{1} << 22;

// What a convolution primitive depends on: its geometry, and whether it is transposed.
using ConvKey = std::tuple<bool, std::vector<int64_t>>;

ConvKey keyOf(bool transposed, const ConvGeometry& g) {
  return {transposed,
          {g.batch,      g.inChannels, g.outChannels, g.groups,  g.inH,       g.inW,
           g.outH,       g.outW,       g.kernelH,     g.kernelW, g.strideH,   g.strideW,
           g.dilationH,  g.dilationW,  g.padTop,      g.padLeft, g.padBottom, g.padRight,
           g.outputPadH, g.outputPadW, g.bias ? 1 : 0}};
}

// One convolution's primitive and its layouts: the plain ones of gxc's tensors (NCHW, and
// PyTorch's weight layouts) and the ones oneDNN chose for speed (blocked: channels in groups
// of 8 or 16 innermost, which its direct JIT kernels vectorize; on plain NCHW it falls back
// to im2col and a GEMM, which cost resnet_cifar twice its time), from kBlockedConvWork on.
// Made once per geometry.
struct PreparedConv {
  memory::desc plainSrc, plainWeights, plainDst, bias;
  memory::desc src, weights, dst;  // the primitive's
  memory::desc scratchpad;
  dnnl::primitive primitive;
};

PreparedConv prepare(bool transposed, const ConvGeometry& g) {
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
  c.plainSrc = memory::desc(srcDims, f32, memory::format_tag::nchw);
  c.plainDst = memory::desc(dstDims, f32, memory::format_tag::nchw);
  c.plainWeights = memory::desc(weightDims, f32, weightLayout);
  c.bias = memory::desc({g.outChannels}, f32, memory::format_tag::a);
  // Small convolutions keep the plain layouts: generating blocked kernels and the reorders
  // around them costs milliseconds per geometry, more than such a convolution saves in a run.
  const int64_t work =
      g.batch * g.outChannels * g.outH * g.outW * (g.inChannels / g.groups) * g.kernelH * g.kernelW;
  const bool blocked = work >= kBlockedConvWork;
  memory::desc src = blocked ? memory::desc(srcDims, f32, any) : c.plainSrc;
  memory::desc dst = blocked ? memory::desc(dstDims, f32, any) : c.plainDst;
  memory::desc weights = blocked ? memory::desc(weightDims, f32, any) : c.plainWeights;
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
    c.primitive = dnnl::deconvolution_forward(pd);
  } else {
    const auto direct = dnnl::algorithm::convolution_direct;
    auto desc = g.bias ? dnnl::convolution_forward::desc(inference, direct, src, weights, c.bias,
                                                         dst, strides, dilates, padBefore, padAfter)
                       : dnnl::convolution_forward::desc(inference, direct, src, weights, dst,
                                                         strides, dilates, padBefore, padAfter);
    dnnl::convolution_forward::primitive_desc pd(desc, attr, engine);
    c.src = pd.src_desc(), c.weights = pd.weights_desc(), c.dst = pd.dst_desc();
    c.scratchpad = pd.scratchpad_desc();
    c.primitive = dnnl::convolution_forward(pd);
  }
  return c;
}

// Prepared convolutions by geometry, for the process: a model runs the same ones every step.
// A primitive may run on several threads at once (the sim platform's streams): each call
// brings its own scratchpad (onednn_engine.h).
const PreparedConv& preparedConv(bool transposed, const ConvGeometry& g) {
  static std::mutex mutex;
  static std::map<ConvKey, std::unique_ptr<PreparedConv>> prepared;
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<PreparedConv>& entry = prepared[keyOf(transposed, g)];
  if (!entry) entry = std::make_unique<PreparedConv>(prepare(transposed, g));
  return *entry;
}

// `plain` in the primitive's layout `wanted`: the same memory when they agree, else a reorder
// into a new buffer.
memory inLayout(memory plain, const memory::desc& wanted, dnnl::stream& stream) {
  if (plain.get_desc() == wanted) return plain;
  memory converted(wanted, oneDnnEngine());
  dnnl::reorder(plain, converted).execute(stream, plain, converted);
  return converted;
}

// The operand's values as f32: its own bytes when it is f32, a widened copy otherwise.
float* f32Data(const ConstTensorView& tensor, std::vector<float>& copy) {
  if (tensor.dtype() == DType::F32) return const_cast<float*>(tensor.as<float>());
  copy = tensor.toFloats();
  return copy.data();
}

}  // namespace

void cpuConvolution(const Op& op, const std::vector<ConstTensorView>& operands, TensorView result) {
  const bool transposed = op.kind == OpKind::ConvTranspose2d;
  GXC_CHECK(op.kind == OpKind::Conv2d || transposed, "layer '{}': {} is not a convolution",
            op.layerName(), opName(op.kind));
  const ConvGeometry g = transposed ? convTranspose2dGeometry(op) : conv2dGeometry(op);
  GXC_CHECK(operands.size() == (g.bias ? 3u : 2u), "layer '{}': {} given {} operands",
            op.layerName(), opName(op.kind), operands.size());
  const TensorType& type = op.result->type;
  GXC_CHECK(result.dtype() == type.dtype && result.shape() == type.shape,
            "layer '{}': {} result placed as {}{}, not {}", op.layerName(), opName(op.kind),
            dtypeName(result.dtype()), shapeString(result.shape()), type.withoutDevice());
  // oneDNN has no f64 convolution: f64 runs the generated kernel (host_generated_kernels.cpp).
  GXC_CHECK(type.dtype != DType::F64, "layer '{}': an f64 {} sent to oneDNN", op.layerName(),
            opName(op.kind));
  if (result.numel() == 0) return;
  std::vector<float> xCopy, wCopy, biasCopy, scratch;
  float* x = f32Data(operands[0], xCopy);
  float* w = f32Data(operands[1], wCopy);
  float* out = result.dtype() == DType::F32 ? result.as<float>() : nullptr;
  if (!out) {
    scratch.resize(static_cast<size_t>(result.numel()));
    out = scratch.data();
  }

  const PreparedConv& c = preparedConv(transposed, g);
  const dnnl::engine& engine = oneDnnEngine();
  dnnl::stream stream(engine);
  // The weights are reordered at every call: a training step changes them.
  memory src = inLayout(memory(c.plainSrc, engine, x), c.src, stream);
  memory weights = inLayout(memory(c.plainWeights, engine, w), c.weights, stream);
  memory plainDst(c.plainDst, engine, out);
  memory dst = c.dst == c.plainDst ? plainDst : memory(c.dst, engine);
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src},
                                       {DNNL_ARG_WEIGHTS, weights},
                                       {DNNL_ARG_DST, dst},
                                       {DNNL_ARG_SCRATCHPAD, memory(c.scratchpad, engine)}};
  if (g.bias) args.emplace(DNNL_ARG_BIAS, memory(c.bias, engine, f32Data(operands[2], biasCopy)));
  c.primitive.execute(stream, args);
  if (dst != plainDst) dnnl::reorder(dst, plainDst).execute(stream, dst, plainDst);
  stream.wait();
  for (size_t i = 0; i < scratch.size(); ++i)
    result.storeFloat(static_cast<int64_t>(i), scratch[i]);
}

}  // namespace gxc
