#include "runtime/host/cpu_conv.h"

#include <omp.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <memory>
#include <string>
#include <unordered_map>

#include "ir/conv_geometry.h"
#include "ir/diagnostic.h"
#include "runtime/host/conv_primitive.h"
#include "runtime/host/onednn_engine.h"

// Function clones for the host's wider vector units, where the compiler can make them. Not
// under ThreadSanitizer: the clones' resolver runs while the program is loaded, before TSan's
// runtime is up, and the instrumented resolver crashes the process.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define GXC_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define GXC_VECTOR_CLONES
#endif

namespace gxc {
namespace {

using dnnl::memory;

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

// torch.clamp over `count` floats in place: below `low` to `low`, then above `high` to `high`;
// a NaN stays NaN (both comparisons are false), where oneDNN's clip would make it `low`. Built
// for AVX-512 and AVX2 as well, picked when the process starts: the build's own target has
// 4 lanes, and this pass over a convolution's output is a tenth of MobileNetV2's time with them.
GXC_VECTOR_CLONES void clampRange(float* data, int64_t count, float low, float high) {
#pragma omp simd
  for (int64_t i = 0; i < count; ++i) {
    float v = data[i];
    v = v < low ? low : v;
    data[i] = v > high ? high : v;
  }
}

// torch.nn.functional.hardswish over `count` floats in place, x * clamp(x + 3, 0, 6) / 6 in the
// reference interpreter's order of operations; a NaN stays NaN (oneDNN's hardswish would clip
// it). Vectorized as clampRange is.
GXC_VECTOR_CLONES void hardswishRange(float* data, int64_t count) {
#pragma omp simd
  for (int64_t i = 0; i < count; ++i) {
    const float v = data[i];
    float t = v + 3.0f;
    t = t < 0.0f ? 0.0f : t;
    t = t > 6.0f ? 6.0f : t;
    data[i] = v * t / 6.0f;
  }
}

// `activation` over `count` floats in place, on every core from 2^18 floats, each thread one
// contiguous chunk.
void applyInPlace(const StoredActivation& activation, float* data, int64_t count) {
#pragma omp parallel if (count >= (int64_t{1} << 18))
  {
    const int64_t threads = omp_get_num_threads(), thread = omp_get_thread_num();
    const int64_t begin = count * thread / threads, end = count * (thread + 1) / threads;
    if (activation.kind == OpKind::Hardswish)
      hardswishRange(data + begin, end - begin);
    else
      clampRange(data + begin, end - begin, activation.low, activation.high);
  }
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

// The convolution `op` into `result`, with the post-ops `post` where given; false, having
// done nothing, where oneDNN has no fast implementation of those post-ops.
bool convolve(const Op& op, const std::vector<ConstTensorView>& operands, TensorView result,
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
  if (result.numel() == 0) return true;
  // The clamps and hardswishes that end the post-ops run after the primitive (conv_post_ops.h).
  const PreparedConv& c =
      preparedConv(transposed, g, post ? primitivePostOps(post->shape) : PostOpShape(), layouts);
  if (!c.postOpsTaken) return false;
  std::vector<float> xCopy, wCopy, biasCopy, scratch;
  float* x = f32Data(operands[0], xCopy);
  float* w = f32Data(operands[1], wCopy);
  float* out = result.dtype() == DType::F32 ? result.as<float>() : nullptr;
  if (!out) {
    scratch.resize(static_cast<size_t>(result.numel()));
    out = scratch.data();
  }

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
  return true;
}

}  // namespace

void cpuConvolution(const Op& op, const std::vector<ConstTensorView>& operands, TensorView result,
                    ConstantWeights* constant, const ConvLayouts& layouts) {
  convolve(op, operands, result, constant, nullptr, layouts);
}

bool cpuConvolutionTakesEpilogue(const Op& op, const std::vector<const Op*>& epilogue) {
  if (op.result->type.dtype != DType::F32 || op.kind != OpKind::Conv2d) return false;
  const PostOpShape post = postOpShape(op, epilogue);
  if (!storedActivationsEndThePostOps(post)) return false;
  return post.find('a') == PostOpShape::npos ||
         residualPostOpsTaken(conv2dGeometry(op), primitivePostOps(post));
}

bool cpuConvolutionWithEpilogue(const Op& op, const std::vector<ConstTensorView>& operands,
                                TensorView result, ConstantWeights* constant,
                                const std::vector<const Op*>& epilogue, const StepTensors& tensors,
                                const ConvLayouts& layouts) {
  if (op.result->type.dtype != DType::F32 || op.kind != OpKind::Conv2d) return false;
  ConvPostOps post = convPostOps(op, epilogue, tensors);
  if (!storedActivationsEndThePostOps(post.shape) ||
      !convolve(op, operands, result, constant, &post, layouts))
    return false;
  for (const StoredActivation& activation : post.activations)
    applyInPlace(activation, result.as<float>(), result.numel());
  return true;
}

}  // namespace gxc
