#include "runtime/host/cpu_gemm.h"

#include <algorithm>

#include <cblas.h>

namespace gxc {
namespace {

// f32 view of a tensor: the tensor's own buffer when it is f32, a widened copy otherwise.
class F32View {
 public:
  explicit F32View(const ConstTensorView& tensor) {
    if (tensor.dtype() == DType::F32) {
      data_ = tensor.as<float>();
    } else {
      copy_ = tensor.toFloats();
      data_ = copy_.data();
    }
  }
  const float* data() const { return data_; }

 private:
  const float* data_ = nullptr;
  std::vector<float> copy_;
};

// C[m,n] = op(A) op(B) + beta C for row-major A and B, where op() transposes when asked.
void sgemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, const float* a,
           const float* b, float* c, float beta = 0.0f) {
  cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans,
              static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0f, a,
              static_cast<int>(transA ? m : k), b, static_cast<int>(transB ? k : n), beta, c,
              static_cast<int>(n));
}

// Where the GEMM writes: straight into the result for f32, else an f32 scratch buffer that
// finish() rounds into the result's dtype.
class F32Result {
 public:
  F32Result(const Op& op, TensorView result) : result_(std::move(result)) {
    const TensorType& type = op.result->type;
    GXC_CHECK(result_.dtype() == type.dtype && result_.shape() == type.shape,
              "layer '{}': GEMM result placed as {}{}, not {}", op.layerName(),
              dtypeName(result_.dtype()), shapeString(result_.shape()), type.withoutDevice());
    if (type.dtype != DType::F32) scratch_.resize(static_cast<size_t>(result_.numel()));
  }
  float* data() { return scratch_.empty() ? result_.as<float>() : scratch_.data(); }
  void finish() {
    for (size_t i = 0; i < scratch_.size(); ++i)
      result_.storeFloat(static_cast<int64_t>(i), scratch_[i]);
  }

 private:
  TensorView result_;
  std::vector<float> scratch_;
};

void checkGemmSize(const Op& op, int64_t m, int64_t n, int64_t k) {
  // cblas takes int dimensions; larger GEMMs belong to split-layers.
  constexpr int64_t limit = 2147483647;
  if (m > limit || n > limit || k > limit)
    runtimeError(op.loc, "layer '{}': a {}x{}x{} GEMM exceeds the BLAS int range", op.layerName(),
                 m, n, k);
}

}  // namespace

void cpuMatmul(const Op& op, const std::vector<ConstTensorView>& operands, TensorView result) {
  const ConstTensorView& a = operands[0];
  const ConstTensorView& b = operands[1];
  bool transA = op.attrs.getBool("transpose_a", false);
  bool transB = op.attrs.getBool("transpose_b", false);
  const TensorType& type = op.result->type;
  int64_t m = type.shape[type.shape.size() - 2], n = type.shape.back();
  int64_t k = transA ? a.shape()[a.shape().size() - 2] : a.shape().back();
  checkGemmSize(op, m, n, k);
  int64_t batch = type.shape.size() == 3 ? type.shape[0] : 1;
  // A 2-D operand of a batched matmul, or a batch of 1, is broadcast: its stride is 0.
  int64_t strideA = a.rank() == 3 && a.shape()[0] > 1 ? m * k : 0;
  int64_t strideB = b.rank() == 3 && b.shape()[0] > 1 ? k * n : 0;
  F32View av(a), bv(b);
  F32Result c(op, std::move(result));
  for (int64_t i = 0; i < batch; ++i)
    sgemm(transA, transB, m, n, k, av.data() + i * strideA, bv.data() + i * strideB,
          c.data() + i * m * n);
  c.finish();
}

void cpuLinear(const Op& op, const std::vector<ConstTensorView>& operands, TensorView result) {
  const ConstTensorView& x = operands[0];
  int64_t in = op.attrs.getInt("in_features", 0), out = op.attrs.getInt("out_features", 0);
  int64_t rows = in == 0 ? 0 : x.numel() / in;
  checkGemmSize(op, rows, out, in);
  F32View xv(x), wv(operands[1]);
  F32Result y(op, std::move(result));
  float beta = 0.0f;
  if (operands.size() == 3) {  // y = bias, then y = x W^T + y: the bias rides in the GEMM
    F32View bias(operands[2]);
    for (int64_t r = 0; r < rows; ++r)
      std::copy(bias.data(), bias.data() + out, y.data() + r * out);
    beta = 1.0f;
  }
  sgemm(false, true, rows, out, in, xv.data(), wv.data(), y.data(), beta);
  y.finish();
}

}  // namespace gxc
