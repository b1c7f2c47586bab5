#include "runtime/host/cpu_conv.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>

#include "ir/conv_geometry.h"
#include "ir/diagnostic.h"
#include "runtime/host/conv_post_ops.h"
#include "runtime/host/onednn_engine.h"

namespace gxc {
namespace {

using dnnl::memory;

// The post-ops' letters (conv_post_ops.h); empty: the convolution alone.
using PostOpShape = std::string;

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

// One convolution's primitive and its layouts: the plain ones of gxc's tensors (NCHW, and
// PyTorch's weight layouts) and the ones oneDNN chose for speed (blocked: channels in groups
// of 8 or 16 innermost, which its direct JIT kernels vectorize; on plain NCHW it falls back
// to im2col and a GEMM, which cost resnet_cifar twice its time). Every convolution takes them,
// however small: with the reorders made once (below), resnet_cifar at batch 8 took a fifth less
// time than with its small convolutions left plain, and its first step no more.
// Made once per geometry.
struct PreparedConv {
  memory::desc plainSrc, plainWeights, plainDst, bias;
  memory::desc residual;           // a residual add's operand as gxc holds it: NCHW, or NHWC
  memory::desc src, weights, dst;  // the primitive's
  memory::desc scratchpad;
  // The post-ops' second operands (per-channel scales and shifts, residuals), in post-op
  // order, the index of each among all post-ops, and for a residual the reorder into the
  // primitive's layout from `residual` (empty where they are the same, or for a scale or
  // shift).
  std::vector<memory::desc> src1;
  std::vector<int> src1PostOp;
  std::vector<dnnl::reorder> src1In;
  // Whether oneDNN runs the post-ops in a fast implementation; where it does not, the caller
  // runs the convolution alone and the epilogue's kernel (and nothing else here is made).
  bool postOpsTaken = true;
  std::string implementation;  // oneDNN's name for it
  dnnl::primitive primitive;
  // Between the plain layouts and the primitive's, where they differ (else empty): made once,
  // as the primitive is; a reorder made at each call cost a small convolution a fifth of its
  // time.
  dnnl::reorder srcIn, weightsIn, dstOut;
};

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
PreparedConv prepareWith(bool transposed, const ConvGeometry& g, const PostOpShape& post,
                         const ConvLayouts& layouts,
                         std::optional<memory::format_tag> activations) {
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
    c.primitive = dnnl::deconvolution_forward(pd);
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
    c.primitive = dnnl::convolution_forward(pd);
  }
  c.srcIn = reorderBetween(c.plainSrc, c.src);
  c.weightsIn = reorderBetween(c.plainWeights, c.weights);
  c.dstOut = reorderBetween(c.dst, c.plainDst);
  return c;
}

PreparedConv prepare(bool transposed, const ConvGeometry& g, const PostOpShape& post,
                     const ConvLayouts& layouts) {
  PreparedConv c;
  if (post.find('a') == PostOpShape::npos) {
    c = prepareWith(transposed, g, post, layouts, std::nullopt);
  } else {
    // A residual add (a binary post-op without broadcast) with the layouts left to oneDNN
    // sends it to its im2col GEMM on NCHW, ten times slower for resnet_cifar's convolutions;
    // with the activations fixed to a blocked layout its direct JIT convolutions take it: the
    // channels in blocks of 16 or 8 where they fill them (at 8 channels, 16-blocks leave only
    // its reference code and NHWC a JIT kernel a third slower than without the residual, by
    // DNNL_VERBOSE), else NHWC. The residual is reordered into that layout at each call unless
    // it is in it already.
    c.postOpsTaken = false;
    std::vector<memory::format_tag> candidates{memory::format_tag::acdb};
    if (g.groups == 1 && g.inChannels % 8 == 0 && g.outChannels % 8 == 0)
      candidates.insert(candidates.begin(), memory::format_tag::nChw8c);
    if (g.groups == 1 && g.inChannels % 16 == 0 && g.outChannels % 16 == 0)
      candidates.insert(candidates.begin(), memory::format_tag::nChw16c);
    // Activations already channels-last are read and written as they are: no reorders.
    if (layouts.imageChannelsLast || layouts.resultChannelsLast || layouts.residualChannelsLast)
      candidates.insert(candidates.begin(), memory::format_tag::acdb);
    for (memory::format_tag layout : candidates) {
      PreparedConv fixed = prepareWith(transposed, g, post, layouts, layout);
      if (fixed.implementation.rfind("jit", 0) == 0 || fixed.implementation.rfind("brg", 0) == 0) {
        c = std::move(fixed);
        break;
      }
    }
    if (!c.postOpsTaken) return c;
  }
  for (const memory::desc& src1 : c.src1)
    c.src1In.push_back(src1.dims() == c.plainDst.dims() ? reorderBetween(c.residual, src1)
                                                        : dnnl::reorder());
  return c;
}

// Prepared convolutions by geometry, for the process: a model runs the same ones every step.
// A primitive may run on several threads at once (the sim platform's streams): each call
// brings its own scratchpad (onednn_engine.h).
const PreparedConv& preparedConv(bool transposed, const ConvGeometry& g, const PostOpShape& post,
                                 const ConvLayouts& layouts) {
  static std::mutex mutex;
  static std::map<ConvKey, std::unique_ptr<PreparedConv>> prepared;
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<PreparedConv>& entry = prepared[keyOf(transposed, g, post, layouts)];
  if (!entry) entry = std::make_unique<PreparedConv>(prepare(transposed, g, post, layouts));
  return *entry;
}

// One thread's oneDNN objects for the convolutions it runs: the growing buffers of the blocked
// layouts, and per prepared convolution its memory objects, pointed at each call's tensors and
// buffers (making and destroying them at every call was a tenth of a small convolution's time).
struct ConvMemories {
  memory plainSrc, plainWeights, plainDst, bias;
  memory src, weights, dst, scratchpad;  // the primitive's layouts; the plain ones where equal
  std::vector<memory> src1;              // the post-ops' second operands
  std::vector<memory> plainSrc1;         // a residual as gxc holds it, where reordered in
};

struct ThreadConvState {
  GrowingBuffer srcBuffer, weightsBuffer, dstBuffer;
  GrowingBuffer foldedWeights;                 // plain weights scaled by a folded batch_norm
  std::vector<GrowingBuffer> residualBuffers;  // by post-op operand
  std::unordered_map<const PreparedConv*, ConvMemories> memories;
};

ThreadConvState& threadConvState() {
  thread_local ThreadConvState state;
  return state;
}

ConvMemories& memoriesOf(ThreadConvState& state, const PreparedConv& c) {
  auto [it, created] = state.memories.try_emplace(&c);
  ConvMemories& m = it->second;
  if (!created) return m;
  const dnnl::engine& engine = oneDnnEngine();
  const auto unbound = [&](const memory::desc& desc) { return memory(desc, engine, nullptr); };
  m.plainSrc = unbound(c.plainSrc);
  m.plainWeights = unbound(c.plainWeights);
  m.plainDst = unbound(c.plainDst);
  m.bias = unbound(c.bias);
  m.src = c.srcIn ? unbound(c.src) : m.plainSrc;
  m.weights = c.weightsIn ? unbound(c.weights) : m.plainWeights;
  m.dst = c.dstOut ? unbound(c.dst) : m.plainDst;
  m.scratchpad = unbound(c.scratchpad);
  for (size_t i = 0; i < c.src1.size(); ++i) {
    m.src1.push_back(unbound(c.src1[i]));
    m.plainSrc1.push_back(c.src1In[i] ? unbound(c.residual) : memory());
  }
  return m;
}

// The operand's values as f32: its own bytes when it is f32, a widened copy otherwise.
float* f32Data(const ConstTensorView& tensor, std::vector<float>& copy) {
  if (tensor.dtype() == DType::F32) return const_cast<float*>(tensor.as<float>());
  copy = tensor.toFloats();
  return copy.data();
}

// Each output channel's weights (oihw: contiguous, the output channel outermost) times its
// scale, into `into`.
void scaleOutputChannels(const float* weights, const std::vector<float>& scale, size_t count,
                         float* into) {
  const size_t perChannel = count / scale.size();
  for (size_t o = 0; o < scale.size(); ++o)
    for (size_t k = 0; k < perChannel; ++k)
      into[o * perChannel + k] = weights[o * perChannel + k] * scale[o];
}

// Whether the weights of `op` (and the params of a batch_norm folded into them) keep their
// values from one run to the next, so that their packed copy does too.
bool weightsConstant(const Op& op, const ConstTensorView& weights, const ConstantWeights* constant,
                     const ConvPostOps* post) {
  if (!constant || !constant->holds(op.operands[1]) || weights.dtype() != DType::F32) return false;
  if (post && post->folded)
    for (size_t i = 1; i < post->folded->operands.size(); ++i)
      if (!constant->holds(post->folded->operands[i])) return false;
  return true;
}

// The convolution `op` into `result`, with the post-ops `post` where given.
void convolve(const Op& op, const std::vector<ConstTensorView>& operands, TensorView result,
              ConstantWeights* constant, const ConvPostOps* post, const ConvLayouts& layouts) {
  static const std::vector<const float*> kNone;
  const std::vector<const float*>& src1 = post ? post->src1 : kNone;
  const bool folded = post && post->folded;
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

  const PreparedConv& c = preparedConv(transposed, g, post ? post->shape : PostOpShape(), layouts);
  GXC_CHECK(src1.size() == c.src1.size(), "layer '{}': {} post-op operands for {}", op.layerName(),
            src1.size(), c.src1.size());
  ThreadConvState& state = threadConvState();
  ConvMemories& m = memoriesOf(state, c);
  m.plainSrc.set_data_handle(x);
  m.plainDst.set_data_handle(out);
  dnnl::stream& stream = threadStream();
  if (c.srcIn) {
    m.src.set_data_handle(state.srcBuffer.atLeast(c.src.get_size()));
    c.srcIn.execute(stream, m.plainSrc, m.src);
  }
  // The plain weights the primitive reads: the operand's, or, with a batch_norm folded in,
  // each output channel's scaled by it.
  const auto plainWeights = [&]() -> float* {
    if (!folded) return w;
    const size_t bytes = c.plainWeights.get_size();
    float* scaled = static_cast<float*>(state.foldedWeights.atLeast(bytes));
    scaleOutputChannels(w, post->weightScale, bytes / sizeof(float), scaled);
    return scaled;
  };
  // Weights a training step may change are reordered at every call; constant ones once (a
  // folded batch_norm's packed copy is its own: the same weights without it differ).
  if (c.weightsIn && weightsConstant(op, operands[1], constant, post)) {
    const auto pack = [&](void* into) {
      m.plainWeights.set_data_handle(plainWeights());
      m.weights.set_data_handle(into);
      c.weightsIn.execute(stream, m.plainWeights, m.weights);
      stream.wait();
    };
    const void* key = folded ? static_cast<const void*>(post->folded) : &c;
    m.weights.set_data_handle(
        const_cast<void*>(constant->packed(w, key, c.weights.get_size(), pack)));
  } else {
    m.plainWeights.set_data_handle(plainWeights());  // m.weights too, where the same layout
    if (c.weightsIn) {
      m.weights.set_data_handle(state.weightsBuffer.atLeast(c.weights.get_size()));
      c.weightsIn.execute(stream, m.plainWeights, m.weights);
    }
  }
  if (c.dstOut) m.dst.set_data_handle(state.dstBuffer.atLeast(c.dst.get_size()));
  m.scratchpad.set_data_handle(threadScratchpad(c.scratchpad.get_size()));
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, m.src},
                                       {DNNL_ARG_WEIGHTS, m.weights},
                                       {DNNL_ARG_DST, m.dst},
                                       {DNNL_ARG_SCRATCHPAD, m.scratchpad}};
  if (folded) {  // the batch_norm's shift, and the convolution's own bias scaled
    m.bias.set_data_handle(const_cast<float*>(post->bias.data()));
    args.emplace(DNNL_ARG_BIAS, m.bias);
  } else if (g.bias) {
    m.bias.set_data_handle(f32Data(operands[2], biasCopy));
    args.emplace(DNNL_ARG_BIAS, m.bias);
  }
  for (size_t i = 0; i < src1.size(); ++i) {
    if (c.src1In[i]) {
      if (state.residualBuffers.size() <= i) state.residualBuffers.resize(i + 1);
      m.plainSrc1[i].set_data_handle(const_cast<float*>(src1[i]));
      m.src1[i].set_data_handle(state.residualBuffers[i].atLeast(c.src1[i].get_size()));
      c.src1In[i].execute(stream, m.plainSrc1[i], m.src1[i]);
    } else {
      m.src1[i].set_data_handle(const_cast<float*>(src1[i]));
    }
    args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(c.src1PostOp[i]) | DNNL_ARG_SRC_1, m.src1[i]);
  }
  c.primitive.execute(stream, args);
  if (c.dstOut) c.dstOut.execute(stream, m.dst, m.plainDst);
  stream.wait();
  for (size_t i = 0; i < scratch.size(); ++i)
    result.storeFloat(static_cast<int64_t>(i), scratch[i]);
}

}  // namespace

void cpuConvolution(const Op& op, const std::vector<ConstTensorView>& operands, TensorView result,
                    ConstantWeights* constant, const ConvLayouts& layouts) {
  convolve(op, operands, result, constant, nullptr, layouts);
}

bool cpuConvolutionTakesEpilogue(const Op& op, const std::vector<const Op*>& epilogue) {
  if (op.result->type.dtype != DType::F32 || op.kind != OpKind::Conv2d) return false;
  // The plain tensors' layouts change only the order prepare() tries its candidate layouts in,
  // not whether one of them is taken.
  return preparedConv(false, conv2dGeometry(op), postOpShape(op, epilogue), {}).postOpsTaken;
}

bool cpuConvolutionWithEpilogue(const Op& op, const std::vector<ConstTensorView>& operands,
                                TensorView result, ConstantWeights* constant,
                                const std::vector<const Op*>& epilogue,
                                const std::map<const Value*, ConstTensorView>& tensors,
                                const ConvLayouts& layouts) {
  if (op.result->type.dtype != DType::F32 || op.kind != OpKind::Conv2d) return false;
  ConvPostOps post = convPostOps(op, epilogue, tensors);
  if (!preparedConv(false, conv2dGeometry(op), post.shape, layouts).postOpsTaken) return false;
  convolve(op, operands, result, constant, &post, layouts);
  return true;
}

}  // namespace gxc
