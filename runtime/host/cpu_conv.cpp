#include "runtime/host/cpu_conv.h"

#include <oneapi/dnnl/dnnl.hpp>

#include "ir/conv_geometry.h"
#include "ir/diagnostic.h"
#include "runtime/host/onednn_engine.h"

namespace gxc {
namespace {

using dnnl::memory;

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

  const auto f32 = memory::data_type::f32;
  memory::desc src({g.batch, g.inChannels, g.inH, g.inW}, f32, memory::format_tag::nchw);
  memory::desc dst({g.batch, g.outChannels, g.outH, g.outW}, f32, memory::format_tag::nchw);
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
  memory::desc weights(weightDims, f32, weightLayout);
  memory::desc biasDesc({g.outChannels}, f32, memory::format_tag::a);
  const memory::dims strides{g.strideH, g.strideW};
  // oneDNN counts dilation from 0 (no gap), PyTorch from 1.
  const memory::dims dilates{g.dilationH - 1, g.dilationW - 1};
  // A transposed convolution's output_padding adds rows on the bottom/right: oneDNN takes it as
  // that much less padding on that side.
  const memory::dims padBefore{g.padTop, g.padLeft};
  const memory::dims padAfter{g.padBottom - g.outputPadH, g.padRight - g.outputPadW};
  const auto inference = dnnl::prop_kind::forward_inference;
  const dnnl::engine& engine = oneDnnEngine();
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, memory(src, engine, x)},
                                       {DNNL_ARG_WEIGHTS, memory(weights, engine, w)},
                                       {DNNL_ARG_DST, memory(dst, engine, out)}};
  if (g.bias) args.emplace(DNNL_ARG_BIAS, memory(biasDesc, engine, f32Data(operands[2], biasCopy)));
  dnnl::stream stream(engine);
  if (transposed) {
    const auto direct = dnnl::algorithm::deconvolution_direct;
    auto desc = g.bias
                    ? dnnl::deconvolution_forward::desc(inference, direct, src, weights, biasDesc,
                                                        dst, strides, dilates, padBefore, padAfter)
                    : dnnl::deconvolution_forward::desc(inference, direct, src, weights, dst,
                                                        strides, dilates, padBefore, padAfter);
    dnnl::deconvolution_forward::primitive_desc primitive(desc, engine);
    dnnl::deconvolution_forward(primitive).execute(stream, args);
  } else {
    const auto direct = dnnl::algorithm::convolution_direct;
    auto desc = g.bias ? dnnl::convolution_forward::desc(inference, direct, src, weights, biasDesc,
                                                         dst, strides, dilates, padBefore, padAfter)
                       : dnnl::convolution_forward::desc(inference, direct, src, weights, dst,
                                                         strides, dilates, padBefore, padAfter);
    dnnl::convolution_forward::primitive_desc primitive(desc, engine);
    dnnl::convolution_forward(primitive).execute(stream, args);
  }
  stream.wait();
  for (size_t i = 0; i < scratch.size(); ++i)
    result.storeFloat(static_cast<int64_t>(i), scratch[i]);
}

}  // namespace gxc
