// An f32 GEMM on the host through oneDNN's matmul primitive, for cpu_gemm.cpp. Measured per
// shape against OpenBLAS's cblas_sgemm on a 2-core AVX-512 machine (the wide MLP's and the
// transformer block's GEMMs: 64 to 1024 rows, 512 to 4096 columns and depth), the primitive
// took 7-22% less time on one thread and on two; oneDNN's own dnnl_sgemm was slower than both
// on two threads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/host/constant_weights.h"

namespace gxc {

// What oneDNN applies to a GEMM's product before it stores it (its post-ops), in order: one
// letter each, 'r' relu, 'g' gelu (erf), 't' gelu (tanh), 'a' the add of a residual, a dense
// row-major [m, n] matrix, the next of `residuals`.
struct GemmPostOps {
  std::string shape;
  std::vector<const float*> residuals;
};

// C[m,n] = op(A) op(B) (+ bias[n] on every row, where bias is not null), then `post` where
// given (k > 0), all row-major and dense, op() transposing where asked. Runs on
// omp_get_max_threads() of the calling thread.
void onednnSgemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, const float* a,
                 const float* b, const float* bias, float* c, const GemmPostOps* post = nullptr);

// The same, with B constant between runs: packed once into `constant`, in the layout the
// primitive prefers, keyed by `b`'s address; later calls with the same `b` read that copy and
// never `b` itself.
void onednnSgemmConstantB(bool transA, bool transB, int64_t m, int64_t n, int64_t k, const float* a,
                          const float* b, const float* bias, float* c, ConstantWeights& constant,
                          const GemmPostOps* post = nullptr);

// Whether onednnSgemmConstantB keeps a packed copy of B for this shape: whether the primitive
// prefers a layout of its own to B as given. It does for most shapes on AVX-512; with AVX2 it
// takes many as they are, and then there is nothing to pack.
bool onednnPacksConstantB(bool transA, bool transB, int64_t m, int64_t n, int64_t k);

// C[i] = scale op(A[i]) op(B[i]) for i < batches, each matrix dense and row-major and the
// matrices one after another (the host's attention: its scores and its weighted values).
void onednnBatchedSgemm(int64_t batches, bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                        float scale, const float* a, const float* b, float* c);

}  // namespace gxc
