#include "runtime/host/cpu_gemm.h"

#include <algorithm>
#include <optional>
#include <type_traits>

#include <cblas.h>
#include <omp.h>

#include "ir/fused_kernel.h"
#include "runtime/host/onednn_matmul.h"
#include "target/cost_model.h"

namespace gxc {
namespace {

// The type a GEMM of `dtype` computes in: double for f64 (cblas_dgemm), float for the rest.
template <typename T>
bool computesIn(DType dtype) {
  return (dtype == DType::F64) == std::is_same_v<T, double>;
}

// A tensor as the GEMM's compute type T: the tensor's own buffer when it is of that type, a
// widened copy otherwise (f16 and bf16 into f32; f64 is always read in place).
template <typename T>
class ComputeView {
 public:
  explicit ComputeView(const ConstTensorView& tensor) {
    if constexpr (std::is_same_v<T, double>) {
      GXC_CHECK(tensor.dtype() == DType::F64, "a double GEMM operand of {}",
                dtypeName(tensor.dtype()));
      data_ = tensor.as<double>();
    } else if (tensor.dtype() == DType::F32) {
      data_ = tensor.as<float>();
    } else {
      copy_ = tensor.toFloats();
      data_ = copy_.data();
    }
  }
  const T* data() const { return data_; }

 private:
  const T* data_ = nullptr;
  std::vector<T> copy_;
};

// Below this many multiply-adds a GEMM runs on the calling thread: waking the other cores
// costs more than they save. Measured on two cores with oneDNN's matmul (`gxc run
// bench/models/mlp_batch.yaml --iterations 2000`, p50): the regression MLP at batch 4096
// (4096x16x13, 4096x32x16) takes 111 us with its GEMMs on one thread, 85 us split from 2^18
// on and 67 us from 2^16; at batch 64 (64x32x16) splitting from 2^14 costs 6.0 -> 6.8 us;
// gpt_decoder at batch 16 (256x32x32) 428 -> 405 us. (2^23 was OpenBLAS's figure, whose
// split cost the regression MLP twice its time.)
constexpr int64_t kSerialGemmWork = int64_t{1} << 16;

// oneDNN and OpenBLAS, both built on OpenMP, run on as many threads as omp_get_max_threads()
// says for the calling thread; this sets that to one for a scope.
class OneThreadScope {
 public:
  OneThreadScope() : saved_(omp_get_max_threads()) { omp_set_num_threads(1); }
  ~OneThreadScope() { omp_set_num_threads(saved_); }
  OneThreadScope(const OneThreadScope&) = delete;
  OneThreadScope& operator=(const OneThreadScope&) = delete;

 private:
  int saved_;
};

// C[m,n] = op(A) op(B) (+ bias[n] on every row, where not null) for row-major A and B, where
// op() transposes when asked: f32 through oneDNN's matmul (onednn_matmul.h says why), B packed
// into `constantB` where it is given (B's bytes stay the same between runs), f64 through
// cblas_dgemm, the bias first copied into C's rows and accumulated onto (beta 1).
void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, const float* a, const float* b,
          const float* bias, float* c, ConstantWeights* constantB = nullptr,
          const GemmPostOps* post = nullptr) {
  std::optional<OneThreadScope> serial;
  if (m * n * k < kSerialGemmWork) serial.emplace();
  if (constantB)
    onednnSgemmConstantB(transA, transB, m, n, k, a, b, bias, c, *constantB, post);
  else
    onednnSgemm(transA, transB, m, n, k, a, b, bias, c, post);
}

void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, const double* a,
          const double* b, const double* bias, double* c, ConstantWeights* = nullptr,
          const GemmPostOps* post = nullptr) {
  GXC_CHECK(!post, "post-ops on an f64 GEMM");
  std::optional<OneThreadScope> serial;
  if (m * n * k < kSerialGemmWork) serial.emplace();
  if (bias)
    for (int64_t r = 0; r < m; ++r) std::copy(bias, bias + n, c + r * n);
  cblas_dgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans,
              static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0, a,
              static_cast<int>(transA ? m : k), b, static_cast<int>(transB ? k : n),
              bias ? 1.0 : 0.0, c, static_cast<int>(n));
}

// Where the GEMM writes: straight into the result when it is of the compute type T (f32 or
// f64), else an f32 scratch buffer that finish() rounds into the result's dtype.
template <typename T>
class ComputeResult {
 public:
  ComputeResult(const Op& op, TensorView result) : result_(std::move(result)) {
    const TensorType& type = op.result->type;
    GXC_CHECK(result_.dtype() == type.dtype && result_.shape() == type.shape,
              "layer '{}': GEMM result placed as {}{}, not {}", op.layerName(),
              dtypeName(result_.dtype()), shapeString(result_.shape()), type.withoutDevice());
    GXC_CHECK(computesIn<T>(type.dtype), "layer '{}': GEMM of {} in the wrong compute type",
              op.layerName(), dtypeName(type.dtype));
    if (type.dtype != DType::F32 && type.dtype != DType::F64)
      scratch_.resize(static_cast<size_t>(result_.numel()));
  }
  T* data() { return scratch_.empty() ? result_.as<T>() : scratch_.data(); }
  void finish() {
    for (size_t i = 0; i < scratch_.size(); ++i)
      result_.storeFloat(static_cast<int64_t>(i), static_cast<float>(scratch_[i]));
  }

 private:
  TensorView result_;
  std::vector<T> scratch_;
};

void checkGemmSize(const Op& op, int64_t m, int64_t n, int64_t k) {
  // cblas takes int dimensions; larger GEMMs belong to split-layers.
  constexpr int64_t limit = 2147483647;
  if (m > limit || n > limit || k > limit)
    runtimeError(op.loc, "layer '{}': a {}x{}x{} GEMM exceeds the BLAS int range", op.layerName(),
                 m, n, k);
}

// What a fused epilogue adds to a GEMM on the host (f32 only): a matmul's bias add, the
// post-ops after it.
struct FusedEpilogue {
  const float* bias = nullptr;
  GemmPostOps post;
};

template <typename T>
void matmulIn(const Op& op, const std::vector<ConstTensorView>& operands, TensorView result,
              ConstantWeights* constant, const FusedEpilogue* epilogue = nullptr) {
  const ConstTensorView& a = operands[0];
  const ConstTensorView& b = operands[1];
  bool transA = op.attrs.getBool("transpose_a", false);
  bool transB = op.attrs.getBool("transpose_b", false);
  // The shape the cost model prices: a row-stacked matmul is one GEMM over all its rows.
  const GemmShape shape = gemmShape(op);
  const int64_t m = shape.m, n = shape.n, k = shape.k, batch = shape.batch;
  checkGemmSize(op, m, n, k);
  // A 2-D operand of a batched matmul, or a batch of 1, is broadcast: its stride is 0.
  int64_t strideA = a.rank() == 3 && a.shape()[0] > 1 ? m * k : 0;
  int64_t strideB = b.rank() == 3 && b.shape()[0] > 1 ? k * n : 0;
  ComputeView<T> av(a), bv(b);
  ComputeResult<T> c(op, std::move(result));
  // A constant 2-D B (an ONNX Gemm's or MatMul's initializer) is packed once, for every batch
  // entry and every run; f32 only, as for linear.
  const bool packs =
      constant && strideB == 0 && b.dtype() == DType::F32 && constant->holds(op.operands[1]);
  GXC_CHECK(!epilogue || batch == 1, "layer '{}': an epilogue on a batched matmul", op.layerName());
  const T* bias = nullptr;  // a fused bias add's, f32 only
  if constexpr (std::is_same_v<T, float>)
    if (epilogue) bias = epilogue->bias;
  for (int64_t i = 0; i < batch; ++i)
    gemm(transA, transB, m, n, k, av.data() + i * strideA, bv.data() + i * strideB, bias,
         c.data() + i * m * n, packs ? constant : nullptr, epilogue ? &epilogue->post : nullptr);
  c.finish();
}

template <typename T>
void linearIn(const Op& op, const std::vector<ConstTensorView>& operands, TensorView result,
              ConstantWeights* constant, const FusedEpilogue* epilogue = nullptr) {
  const ConstTensorView& x = operands[0];
  int64_t in = op.attrs.getInt("in_features", 0), out = op.attrs.getInt("out_features", 0);
  int64_t rows = in == 0 ? 0 : x.numel() / in;
  checkGemmSize(op, rows, out, in);
  ComputeView<T> xv(x), wv(operands[1]);
  ComputeResult<T> y(op, std::move(result));
  std::optional<ComputeView<T>> bias;  // rides in the GEMM
  if (operands.size() == 3) bias.emplace(operands[2]);
  // Packed only when f32 already: a widened copy is made anew at every call.
  const bool packs =
      constant && constant->holds(op.operands[1]) && operands[1].dtype() == DType::F32;
  gemm(false, true, rows, out, in, xv.data(), wv.data(), bias ? bias->data() : nullptr, y.data(),
       packs ? constant : nullptr, epilogue ? &epilogue->post : nullptr);
  y.finish();
}

// Whether every tensor the GEMM and its epilogue read and write is f32 and the GEMM is not
// empty: what oneDNN's post-ops take.
bool takesPostOps(const Op& op, const std::vector<ConstTensorView>& operands,
                  const TensorView& result) {
  if (result.dtype() != DType::F32 || result.numel() == 0) return false;
  for (const ConstTensorView& operand : operands)
    if (operand.dtype() != DType::F32 || operand.numel() == 0) return false;
  return op.kind == OpKind::Linear || result.rank() == 2 || isRowStackedMatmul(op);
}

}  // namespace

bool cpuGemmWithEpilogue(const Op& op, const std::vector<ConstTensorView>& operands,
                         TensorView result, ConstantWeights* constant,
                         const std::vector<const Op*>& epilogue, const StepTensors& tensors) {
  if (!takesPostOps(op, operands, result)) return false;
  FusedEpilogue fused;
  const Value* fed = op.result;
  for (size_t i = 0; i < epilogue.size(); ++i) {
    const Op& member = *epilogue[i];
    const bool bias = i == 0 && isGemmBiasAdd(op, member);
    GXC_CHECK(bias || isGemmEpilogueMember(fed, member),
              "layer '{}': {} cannot follow '{}' in a GEMM's epilogue", member.layerName(),
              opName(member.kind), op.layerName());
    if (member.kind == OpKind::Relu) {
      // oneDNN's relu makes NaN 0 (x86's max returns its second operand, the 0, for a NaN
      // first), where torch.relu keeps it: the generated epilogue applies it instead.
      return false;
    } else if (member.kind == OpKind::Gelu) {
      fused.post.shape += member.attrs.getString("approximate", "none") == "tanh" ? 't' : 'g';
    } else {  // an add: the matmul's bias first, else a residual
      const ConstTensorView& tensor = tensors.at(residualOf(member, fed));
      if (tensor.dtype() != DType::F32 || tensor.data() == result.data()) return false;
      if (bias) {
        fused.bias = tensor.as<float>();
      } else {
        fused.post.shape += 'a';
        fused.post.residuals.push_back(tensor.as<float>());
      }
    }
    fed = member.result;
  }
  if (op.kind == OpKind::Matmul)
    matmulIn<float>(op, operands, std::move(result), constant, &fused);
  else
    linearIn<float>(op, operands, std::move(result), constant, &fused);
  return true;
}

void cpuMatmul(const Op& op, const std::vector<ConstTensorView>& operands, TensorView result,
               ConstantWeights* constant) {
  if (op.result->type.dtype == DType::F64)
    matmulIn<double>(op, operands, std::move(result), nullptr);
  else
    matmulIn<float>(op, operands, std::move(result), constant);
}

void cpuLinear(const Op& op, const std::vector<ConstTensorView>& operands, TensorView result,
               ConstantWeights* constant) {
  if (op.result->type.dtype == DType::F64)
    linearIn<double>(op, operands, std::move(result), nullptr);
  else
    linearIn<float>(op, operands, std::move(result), constant);
}

}  // namespace gxc
