#include "runtime/cpu_gemm.h"

#include <cblas.h>

namespace gxc {
namespace {

// f32 view of a tensor: the tensor's own buffer when it is f32, a widened copy otherwise.
class F32View {
 public:
  explicit F32View(const Tensor& tensor) {
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

// C[m,n] = op(A) op(B) for row-major A and B, where op() transposes when asked.
void sgemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, const float* a,
           const float* b, float* c) {
  cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans,
              static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0f, a,
              static_cast<int>(transA ? m : k), b, static_cast<int>(transB ? k : n), 0.0f, c,
              static_cast<int>(n));
}

Tensor storeAs(const TensorType& type, std::vector<float>& values) {
  if (type.dtype == DType::F32) {
    Tensor out(type.dtype, type.shape);
    std::copy(values.begin(), values.end(), out.as<float>());
    return out;
  }
  return Tensor::fromFloats(type.dtype, type.shape, values);
}

void checkGemmSize(const Op& op, int64_t m, int64_t n, int64_t k) {
  // cblas takes int dimensions; larger GEMMs belong to split-layers.
  constexpr int64_t limit = 2147483647;
  if (m > limit || n > limit || k > limit)
    runtimeError(op.loc, "layer '{}': a {}x{}x{} GEMM exceeds the BLAS int range", op.layerName(),
                 m, n, k);
}

}  // namespace

Tensor cpuMatmul(const Op& op, const std::vector<const Tensor*>& operands) {
  const Tensor& a = *operands[0];
  const Tensor& b = *operands[1];
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
  std::vector<float> c(static_cast<size_t>(batch * m * n));
  for (int64_t i = 0; i < batch; ++i)
    sgemm(transA, transB, m, n, k, av.data() + i * strideA, bv.data() + i * strideB,
          c.data() + i * m * n);
  return storeAs(type, c);
}

Tensor cpuLinear(const Op& op, const std::vector<const Tensor*>& operands) {
  const Tensor& x = *operands[0];
  const TensorType& type = op.result->type;
  int64_t in = op.attrs.getInt("in_features", 0), out = op.attrs.getInt("out_features", 0);
  int64_t rows = in == 0 ? 0 : x.numel() / in;
  checkGemmSize(op, rows, out, in);
  F32View xv(x), wv(*operands[1]);
  std::vector<float> y(static_cast<size_t>(rows * out));
  sgemm(false, true, rows, out, in, xv.data(), wv.data(), y.data());  // x W^T
  if (operands.size() == 3) {
    F32View bias(*operands[2]);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < out; ++j) y[static_cast<size_t>(r * out + j)] += bias.data()[j];
  }
  return storeAs(type, y);
}

}  // namespace gxc
