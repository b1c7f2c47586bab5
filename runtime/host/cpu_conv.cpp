#include "runtime/host/cpu_conv.h"

#include <oneapi/dnnl/dnnl.hpp>

#include "ir/conv_geometry.h"
#include "ir/diagnostic.h"

namespace gxc {
namespace {

using dnnl::memory;

// One engine for the process: engines are thread-safe, and making one per call costs more
// than small convolutions do.
const dnnl::engine& cpuEngine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// The operand's values as f32: its own bytes when it is f32, a widened copy otherwise.
float* f32Data(const ConstTensorView& tensor, std::vector<float>& copy) {
  if (tensor.dtype() == DType::F32) return const_cast<float*>(tensor.as<float>());
  copy = tensor.toFloats();
  return copy.data();
}

}  // namespace

void cpuConv2d(const Op& op, const std::vector<ConstTensorView>& operands, TensorView result) {
  const ConvGeometry g = conv2dGeometry(op);
  GXC_CHECK(operands.size() == (g.bias ? 3u : 2u), "layer '{}': conv2d given {} operands",
            op.layerName(), operands.size());
  const TensorType& type = op.result->type;
  GXC_CHECK(result.dtype() == type.dtype && result.shape() == type.shape,
            "layer '{}': conv2d result placed as {}{}, not {}", op.layerName(),
            dtypeName(result.dtype()), shapeString(result.shape()), type.withoutDevice());
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
  // Grouped weights are [groups, out/groups, in/groups, kh, kw]: the same bytes as PyTorch's
  // [out, in/groups, kh, kw].
  memory::desc weights = g.groups == 1
                             ? memory::desc({g.outChannels, g.inChannels, g.kernelH, g.kernelW},
                                            f32, memory::format_tag::oihw)
                             : memory::desc({g.groups, g.outChannels / g.groups,
                                             g.inChannels / g.groups, g.kernelH, g.kernelW},
                                            f32, memory::format_tag::goihw);
  memory::desc biasDesc({g.outChannels}, f32, memory::format_tag::a);
  const memory::dims strides{g.strideH, g.strideW};
  // oneDNN counts dilation from 0 (no gap), PyTorch from 1.
  const memory::dims dilates{g.dilationH - 1, g.dilationW - 1};
  const memory::dims padBefore{g.padTop, g.padLeft}, padAfter{g.padBottom, g.padRight};
  const auto inference = dnnl::prop_kind::forward_inference;
  const auto direct = dnnl::algorithm::convolution_direct;
  auto desc = g.bias ? dnnl::convolution_forward::desc(inference, direct, src, weights, biasDesc,
                                                       dst, strides, dilates, padBefore, padAfter)
                     : dnnl::convolution_forward::desc(inference, direct, src, weights, dst,
                                                       strides, dilates, padBefore, padAfter);
  const dnnl::engine& engine = cpuEngine();
  dnnl::convolution_forward::primitive_desc primitive(desc, engine);
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, memory(src, engine, x)},
                                       {DNNL_ARG_WEIGHTS, memory(weights, engine, w)},
                                       {DNNL_ARG_DST, memory(dst, engine, out)}};
  if (g.bias) args.emplace(DNNL_ARG_BIAS, memory(biasDesc, engine, f32Data(operands[2], biasCopy)));
  dnnl::stream stream(engine);
  dnnl::convolution_forward(primitive).execute(stream, args);
  stream.wait();
  for (size_t i = 0; i < scratch.size(); ++i)
    result.storeFloat(static_cast<int64_t>(i), scratch[i]);
}

}  // namespace gxc
