#include "runtime/host/onednn_matmul.h"

#include <omp.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>

#include "ir/diagnostic.h"
#include "runtime/host/onednn_engine.h"

namespace gxc {
namespace {

using dnnl::memory;

// What a matmul primitive depends on: the batch, the transpositions, the sizes, the scale, a
// bias or not, its post-ops, and the threads it runs on (oneDNN sizes a primitive's work
// split and scratchpad for the threads at its creation).
struct MatmulShape {
  int64_t batches = 1;
  bool transA = false, transB = false;
  int64_t m = 0, n = 0, k = 0;
  float scale = 1.0f;
  bool bias = false;
  int threads = 1;
  bool packedB = false;  // B in the layout the primitive prefers (ConstantWeights), else as given
  std::string postOps;   // GemmPostOps::shape
  auto tied() const {
    return std::tie(batches, transA, transB, m, n, k, scale, bias, threads, packedB, postOps);
  }
  bool operator<(const MatmulShape& other) const { return tied() < other.tied(); }
};

// The shape of a call on the calling thread's threads.
MatmulShape shapeOf(int64_t batches, bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                    float scale, bool bias) {
  MatmulShape shape;
  shape.batches = batches;
  shape.transA = transA;
  shape.transB = transB;
  shape.m = m;
  shape.n = n;
  shape.k = k;
  shape.scale = scale;
  shape.bias = bias;
  shape.threads = omp_get_max_threads();
  return shape;
}

struct PreparedMatmul {
  memory::desc a, b, bias, c, scratchpad;
  dnnl::matmul primitive;
  memory::desc plainB;  // where B is packed: B as given, and the reorder that packs it
  dnnl::reorder packB;
  std::string postOps;
};

// A [rows, cols] matrix of every batch entry, stored transposed or not.
memory::desc matrices(int64_t batches, int64_t rows, int64_t cols, bool transposed) {
  const auto f32 = memory::data_type::f32;
  const memory::dims strides =
      transposed ? memory::dims{rows * cols, 1, rows} : memory::dims{rows * cols, cols, 1};
  if (batches == 1)  // 2-D, as the bias wants its operands
    return memory::desc({rows, cols}, f32, memory::dims{strides[1], strides[2]});
  return memory::desc({batches, rows, cols}, f32, strides);
}

// GemmPostOps::shape as oneDNN's post-ops; a residual is laid out as the product `c` is.
dnnl::post_ops postOpsOf(const std::string& shape, const memory::desc& c) {
  dnnl::post_ops ops;
  for (char letter : shape) {
    switch (letter) {
      case 'r':
        ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
        break;
      case 'g':
        ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_gelu_erf, 0.0f, 0.0f);
        break;
      case 't':
        ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_gelu_tanh, 0.0f, 0.0f);
        break;
      case 'a':
        ops.append_binary(dnnl::algorithm::binary_add, c);
        break;
      default:
        GXC_CHECK(false, "no GEMM post-op '{}'", letter);
    }
  }
  return ops;
}

PreparedMatmul prepare(const MatmulShape& s) {
  PreparedMatmul p;
  p.postOps = s.postOps;
  p.a = matrices(s.batches, s.m, s.k, s.transA);
  p.b = matrices(s.batches, s.k, s.n, s.transB);
  p.c = matrices(s.batches, s.m, s.n, false);
  if (s.bias) p.bias = memory::desc({1, s.n}, memory::data_type::f32, memory::format_tag::ab);
  const memory::desc b =
      s.packedB ? memory::desc(p.b.dims(), memory::data_type::f32, memory::format_tag::any) : p.b;
  const auto desc =
      s.bias ? dnnl::matmul::desc(p.a, b, p.bias, p.c) : dnnl::matmul::desc(p.a, b, p.c);
  dnnl::primitive_attr attr = userScratchpad();
  if (s.scale != 1.0f) attr.set_output_scales(0, {s.scale});
  if (!s.postOps.empty()) attr.set_post_ops(postOpsOf(s.postOps, p.c));
  const dnnl::engine& engine = oneDnnEngine();
  dnnl::matmul::primitive_desc pd(desc, attr, engine);
  p.scratchpad = pd.scratchpad_desc();
  p.primitive = dnnl::matmul(pd);
  if (s.packedB) {
    p.plainB = p.b;
    p.b = pd.weights_desc();
    if (p.b != p.plainB)
      p.packB = dnnl::reorder(dnnl::reorder::primitive_desc(engine, p.plainB, engine, p.b));
  }
  return p;
}

// Prepared matmuls by key, for the process: a model runs the same GEMMs every step.
const PreparedMatmul& preparedMatmul(const MatmulShape& shape) {
  static PreparedPrimitives<MatmulShape, PreparedMatmul> prepared;
  return prepared.get(shape, [&] { return prepare(shape); });
}

// The argument of the i-th post-op's second operand (a residual's 'a'), as execute() takes it.
int residualArg(size_t postOp) {
  return DNNL_ARG_ATTR_MULTIPLE_POST_OP(static_cast<int>(postOp)) | DNNL_ARG_SRC_1;
}

// B packed for `p`: made by the first call for these weights, reused by every later one.
const float* packedB(const PreparedMatmul& p, const float* b, ConstantWeights& constant) {
  if (!p.packB) return b;  // the primitive takes B as it is
  const auto pack = [&](void* into) {
    const dnnl::engine& engine = oneDnnEngine();
    memory plain(p.plainB, engine, const_cast<float*>(b)), packed(p.b, engine, into);
    p.packB.execute(threadStream(), plain, packed);
    threadStream().wait();
  };
  return static_cast<const float*>(constant.packed(b, &p, p.b.get_size(), pack));
}

// Runs the prepared matmul of `shape` on the calling thread's arguments (threadArgs); B is packed
// into `constant` where the shape says so.
void run(const MatmulShape& shape, const float* a, const float* b, const float* bias, float* c,
         ConstantWeights* constant = nullptr, const GemmPostOps* post = nullptr) {
  const PreparedMatmul& p = preparedMatmul(shape);
  if (shape.packedB) b = packedB(p, b, *constant);
  std::unordered_map<int, memory>& args = threadArgs(&p, [&](auto& made) {
    const dnnl::engine& engine = oneDnnEngine();
    made.emplace(DNNL_ARG_SRC, memory(p.a, engine, nullptr));
    made.emplace(DNNL_ARG_WEIGHTS, memory(p.b, engine, nullptr));
    made.emplace(DNNL_ARG_DST, memory(p.c, engine, nullptr));
    made.emplace(DNNL_ARG_SCRATCHPAD, memory(p.scratchpad, engine, nullptr));
    if (!p.bias.is_zero()) made.emplace(DNNL_ARG_BIAS, memory(p.bias, engine, nullptr));
    for (size_t i = 0; i < p.postOps.size(); ++i)
      if (p.postOps[i] == 'a') made.emplace(residualArg(i), memory(p.c, engine, nullptr));
  });
  // oneDNN takes its sources as mutable handles; it only reads them.
  args.at(DNNL_ARG_SRC).set_data_handle(const_cast<float*>(a));
  args.at(DNNL_ARG_WEIGHTS).set_data_handle(const_cast<float*>(b));
  args.at(DNNL_ARG_DST).set_data_handle(c);
  args.at(DNNL_ARG_SCRATCHPAD).set_data_handle(threadScratchpad(p.scratchpad.get_size()));
  if (bias) args.at(DNNL_ARG_BIAS).set_data_handle(const_cast<float*>(bias));
  size_t residual = 0;
  for (size_t i = 0; i < p.postOps.size(); ++i)
    if (p.postOps[i] == 'a')
      args.at(residualArg(i)).set_data_handle(const_cast<float*>(post->residuals.at(residual++)));
  p.primitive.execute(threadStream(), args);
  threadStream().wait();
}

}  // namespace

void onednnSgemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, const float* a,
                 const float* b, const float* bias, float* c, const GemmPostOps* post) {
  if (m == 0 || n == 0) return;
  MatmulShape shape = shapeOf(1, transA, transB, m, n, k, 1.0f, bias != nullptr);
  if (post) shape.postOps = post->shape;
  if (k == 0) {  // an empty sum: the bias, or zeros
    GXC_CHECK(!post, "post-ops after an empty {}x{}x0 GEMM", m, n);
    for (int64_t row = 0; row < m; ++row)
      for (int64_t col = 0; col < n; ++col) c[row * n + col] = bias ? bias[col] : 0.0f;
    return;
  }
  run(shape, a, b, bias, c, nullptr, post);
}

void onednnSgemmConstantB(bool transA, bool transB, int64_t m, int64_t n, int64_t k, const float* a,
                          const float* b, const float* bias, float* c, ConstantWeights& constant,
                          const GemmPostOps* post) {
  if (m == 0 || n == 0 || k == 0) return onednnSgemm(transA, transB, m, n, k, a, b, bias, c, post);
  MatmulShape shape = shapeOf(1, transA, transB, m, n, k, 1.0f, bias != nullptr);
  shape.packedB = true;
  if (post) shape.postOps = post->shape;
  run(shape, a, b, bias, c, &constant, post);
}

bool onednnPacksConstantB(bool transA, bool transB, int64_t m, int64_t n, int64_t k) {
  MatmulShape shape = shapeOf(1, transA, transB, m, n, k, 1.0f, false);
  shape.packedB = true;
  return static_cast<bool>(preparedMatmul(shape).packB);
}

void onednnBatchedSgemm(int64_t batches, bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                        float scale, const float* a, const float* b, float* c) {
  if (batches == 0 || m == 0 || n == 0) return;
  if (k == 0) {
    std::fill(c, c + batches * m * n, 0.0f);
    return;
  }
  run(shapeOf(batches, transA, transB, m, n, k, scale, false), a, b, nullptr, c);
}

}  // namespace gxc
