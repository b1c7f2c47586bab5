#include "runtime/host/cpu_pool.h"

#include <algorithm>
#include <limits>
#include <tuple>

#include <omp.h>

#include "ir/diagnostic.h"
#include "ir/pool_geometry.h"
#include "runtime/host/onednn_engine.h"

namespace gxc {
namespace {

using dnnl::memory;

// The pool as oneDNN sees it: x [n, c, h, w], windows and both sides' padding.
struct PoolShape {
  int64_t n = 1, c = 1;
  PoolGeometry g;
  // Bottom and right padding: what makes oneDNN's output size gxc's (torch's), ceil_mode's
  // last window included; 0 where the last window ends inside x, as oneDNN rounds the output
  // size down as torch does.
  int64_t padBottom = 0, padRight = 0;
};

PoolShape poolShapeOf(const Op& op) {
  const Shape& x = op.operands[0]->type.shape;
  PoolShape s;
  s.g = pool2dGeometry(op);
  s.n = x.size() == 4 ? x[0] : 1;
  s.c = x[x.size() - 3];
  s.padBottom =
      std::max<int64_t>(0, (s.g.outH - 1) * s.g.strideH + s.g.kernelH - s.g.inH - s.g.padH);
  s.padRight =
      std::max<int64_t>(0, (s.g.outW - 1) * s.g.strideW + s.g.kernelW - s.g.inW - s.g.padW);
  return s;
}

// The shape and windows (the right padding follows from them), layout and thread count.
using PoolKey = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                           int64_t, int64_t, int64_t, int64_t, bool, int>;

PoolKey keyOf(const PoolShape& s, bool channelsLast) {
  const PoolGeometry& g = s.g;
  return {s.n,       s.c,       g.inH,     g.inW,  g.outH, g.outW,       g.kernelH,
          g.kernelW, g.strideH, g.strideW, g.padH, g.padW, channelsLast, omp_get_max_threads()};
}

// oneDNN's jit pooling takes source and destination in one layout (mixed ones fall to its
// reference implementation, 500 times slower): the pool runs in x's, and a reorder takes a
// channels-last result to NCHW where the result is wanted so. Where oneDNN has no jit pooling
// for NCHW (its `simple_nchw` on AVX2 machines: GoogLeNet's inception pools took 3.7 ms each at
// batch 1, a third of the network), an NCHW x is reordered to channels-last first, and the pool
// runs there.
struct PreparedPool {
  dnnl::pooling_v2_forward primitive;
  memory::desc src, dst, scratchpad;
  dnnl::reorder toNchw;  // dst, channels-last, to NCHW
  memory::desc nchwDst;
  dnnl::reorder fromNchw;  // an NCHW x to src, channels-last, where oneDNN's NCHW pool is slow
  memory::desc nchwSrc;
  std::string implementation;  // oneDNN's name of the pool's implementation

  bool viaChannelsLast() const { return static_cast<bool>(fromNchw); }
};

dnnl::pooling_v2_forward::primitive_desc poolDesc(const PoolShape& s, memory::format_tag tag) {
  const PoolGeometry& g = s.g;
  memory::desc src({s.n, s.c, g.inH, g.inW}, memory::data_type::f32, tag);
  memory::desc dst({s.n, s.c, g.outH, g.outW}, memory::data_type::f32, tag);
  return dnnl::pooling_v2_forward::primitive_desc(
      dnnl::pooling_v2_forward::desc(dnnl::prop_kind::forward_inference,
                                     dnnl::algorithm::pooling_max, src, dst, {g.strideH, g.strideW},
                                     {g.kernelH, g.kernelW}, {0, 0}, {g.padH, g.padW},
                                     {s.padBottom, s.padRight}),
      userScratchpad(), oneDnnEngine());
}

// oneDNN's implementations that are loops in C++, not generated for the machine's vectors.
bool slowImplementation(const std::string& name) {
  return name.rfind("simple", 0) == 0 || name.rfind("ref", 0) == 0;
}

PreparedPool prepare(const PoolShape& s, bool channelsLast) {
  auto pd = poolDesc(s, channelsLast ? memory::format_tag::nhwc : memory::format_tag::nchw);
  const bool via = !channelsLast && slowImplementation(pd.impl_info_str());
  if (via) pd = poolDesc(s, memory::format_tag::nhwc);
  PreparedPool p;
  p.primitive = dnnl::pooling_v2_forward(pd);
  p.src = pd.src_desc();
  p.dst = pd.dst_desc();
  p.scratchpad = pd.scratchpad_desc();
  p.implementation = pd.impl_info_str();
  const dnnl::engine& engine = oneDnnEngine();
  if (channelsLast || via) {
    p.nchwDst = memory::desc(p.dst.dims(), memory::data_type::f32, memory::format_tag::nchw);
    p.toNchw = dnnl::reorder(dnnl::reorder::primitive_desc(engine, p.dst, engine, p.nchwDst));
  }
  if (via) {
    p.nchwSrc = memory::desc(p.src.dims(), memory::data_type::f32, memory::format_tag::nchw);
    p.fromNchw = dnnl::reorder(dnnl::reorder::primitive_desc(engine, p.nchwSrc, engine, p.src));
  }
  return p;
}

// Whether any of `count` floats is a NaN or -inf: the values oneDNN's max gets wrong.
bool holdsNaNOrNegativeInfinity(const float* x, int64_t count) {
  constexpr float kNegativeInfinity = -std::numeric_limits<float>::infinity();
  int found = 0;  // an int |, not a bool ||: a short-circuit keeps the loop from vectorizing
#pragma omp parallel for simd reduction(| : found) if (parallel : count >= (int64_t{1} << 18))
  for (int64_t i = 0; i < count; ++i) found |= !(x[i] > kNegativeInfinity);
  return found != 0;
}

// Where element (n, c, y, x) of an [N, C, H, W] tensor lies in its bytes, in floats.
struct Strides {
  int64_t n, c, h, w;
};

Strides stridesOf(int64_t c, int64_t h, int64_t w, bool channelsLast) {
  if (channelsLast) return {h * w * c, 1, w * c, c};
  return {c * h * w, h * w, w, 1};
}

// The outputs along one axis whose windows read input position `at`.
std::pair<int64_t, int64_t> windowsReading(int64_t at, int64_t kernel, int64_t stride, int64_t pad,
                                           int64_t outSize) {
  // Window o reads [o * stride - pad, o * stride - pad + kernel).
  const int64_t first = std::max<int64_t>(0, (at + pad - kernel + stride) / stride);
  const int64_t last = std::min<int64_t>(outSize - 1, (at + pad) / stride);
  return {first, last};
}

// torch's max of output (plane n, c; oy, ox): -inf padding, a NaN wins.
float exactMax(const float* x, const Strides& in, const PoolGeometry& g, int64_t n, int64_t c,
               int64_t oy, int64_t ox) {
  const int64_t y0 = std::max<int64_t>(0, oy * g.strideH - g.padH);
  const int64_t y1 = std::min<int64_t>(g.inH, oy * g.strideH - g.padH + g.kernelH);
  const int64_t x0 = std::max<int64_t>(0, ox * g.strideW - g.padW);
  const int64_t x1 = std::min<int64_t>(g.inW, ox * g.strideW - g.padW + g.kernelW);
  float best = -std::numeric_limits<float>::infinity();
  for (int64_t y = y0; y < y1; ++y)
    for (int64_t xi = x0; xi < x1; ++xi) {
      const float v = x[n * in.n + c * in.c + y * in.h + xi * in.w];
      if (v != v) return v;
      best = std::max(best, v);
    }
  return best;
}

// The outputs of every window that reads a NaN or -inf, computed again exactly; x and out in
// one layout, the primitive's.
void fixWindowsOfSpecialValues(const PoolShape& s, const float* x, float* out, bool channelsLast) {
  const PoolGeometry& g = s.g;
  const Strides in = stridesOf(s.c, g.inH, g.inW, channelsLast);
  const Strides o = stridesOf(s.c, g.outH, g.outW, channelsLast);
  constexpr float kNegativeInfinity = -std::numeric_limits<float>::infinity();
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t c = 0; c < s.c; ++c)
      for (int64_t y = 0; y < g.inH; ++y)
        for (int64_t xi = 0; xi < g.inW; ++xi) {
          if (x[n * in.n + c * in.c + y * in.h + xi * in.w] > kNegativeInfinity) continue;
          auto [oy0, oy1] = windowsReading(y, g.kernelH, g.strideH, g.padH, g.outH);
          auto [ox0, ox1] = windowsReading(xi, g.kernelW, g.strideW, g.padW, g.outW);
          for (int64_t oy = oy0; oy <= oy1; ++oy)
            for (int64_t ox = ox0; ox <= ox1; ++ox)
              out[n * o.n + c * o.c + oy * o.h + ox * o.w] = exactMax(x, in, g, n, c, oy, ox);
        }
}

const PreparedPool& preparedPool(const PoolShape& s, bool inputChannelsLast) {
  static PreparedPrimitives<PoolKey, PreparedPool> prepared;
  return prepared.get(keyOf(s, inputChannelsLast), [&] { return prepare(s, inputChannelsLast); });
}

}  // namespace

bool cpuMaxPoolApplies(const Op& op) {
  if (op.kind != OpKind::MaxPool2d || op.result->type.dtype != DType::F32) return false;
  const size_t rank = op.operands[0]->type.shape.size();
  return (rank == 3 || rank == 4) && op.result->type.numel() > 0;
}

std::string cpuMaxPoolImplementation(const Op& op, PoolLayouts layouts) {
  return preparedPool(poolShapeOf(op), layouts.inputChannelsLast).implementation;
}

void cpuMaxPool(const Op& op, const ConstTensorView& x, TensorView result, PoolLayouts layouts) {
  GXC_CHECK(cpuMaxPoolApplies(op), "layer '{}': a pool oneDNN does not run", op.layerName());
  GXC_CHECK(!layouts.resultChannelsLast || layouts.inputChannelsLast,
            "layer '{}': a channels-last pool result of an NCHW input", op.layerName());
  const PoolShape s = poolShapeOf(op);
  const PreparedPool& p = preparedPool(s, layouts.inputChannelsLast);
  const bool poolsChannelsLast = layouts.inputChannelsLast || p.viaChannelsLast();
  const dnnl::engine& engine = oneDnnEngine();
  dnnl::stream& stream = threadStream();
  // oneDNN takes its source as a mutable handle; it only reads it.
  const float* in = x.as<float>();
  const float* source = in;
  thread_local GrowingBuffer channelsLastInput, channelsLastResult;
  if (p.viaChannelsLast()) {
    float* reordered = static_cast<float*>(channelsLastInput.atLeast(x.nbytes()));
    memory from(p.nchwSrc, engine, const_cast<float*>(in)), to(p.src, engine, reordered);
    p.fromNchw.execute(stream, from, to);
    source = reordered;
  }
  const bool reorderResult = poolsChannelsLast && !layouts.resultChannelsLast;
  float* out = reorderResult ? static_cast<float*>(channelsLastResult.atLeast(result.nbytes()))
                             : result.as<float>();
  p.primitive.execute(stream,
                      {{DNNL_ARG_SRC, memory(p.src, engine, const_cast<float*>(source))},
                       {DNNL_ARG_DST, memory(p.dst, engine, out)},
                       {DNNL_ARG_SCRATCHPAD,
                        memory(p.scratchpad, engine, threadScratchpad(p.scratchpad.get_size()))}});
  stream.wait();
  if (holdsNaNOrNegativeInfinity(in, x.numel()))
    fixWindowsOfSpecialValues(s, source, out, poolsChannelsLast);
  if (!reorderResult) return;
  memory from(p.dst, engine, out), to(p.nchwDst, engine, result.as<float>());
  p.toNchw.execute(stream, from, to);
  stream.wait();
}

void cpuMaxPoolNchw(const Op& op, const std::vector<ConstTensorView>& operands, TensorView result) {
  GXC_CHECK(operands.size() == 1, "layer '{}': max_pool2d given {} operands", op.layerName(),
            operands.size());
  cpuMaxPool(op, operands[0], result, {});
}

}  // namespace gxc
