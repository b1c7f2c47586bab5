// cuBLASLt, opened the first time a GEMM on a GPU needs it rather than when gxc starts
// (codegen/toolkit_library.h says why): the functions gxc calls, typed by cublasLt.h.
#pragma once

#include <cublasLt.h>

namespace gxc {

struct CublasLtApi {
  decltype(&cublasLtCreate) create;
  decltype(&cublasLtDestroy) destroy;
  decltype(&cublasLtGetStatusString) getStatusString;
  decltype(&cublasLtMatmul) matmul;
  decltype(&cublasLtMatmulAlgoGetHeuristic) matmulAlgoGetHeuristic;
  decltype(&cublasLtMatmulDescCreate) matmulDescCreate;
  decltype(&cublasLtMatmulDescDestroy) matmulDescDestroy;
  decltype(&cublasLtMatmulDescSetAttribute) matmulDescSetAttribute;
  decltype(&cublasLtMatmulPreferenceCreate) matmulPreferenceCreate;
  decltype(&cublasLtMatmulPreferenceDestroy) matmulPreferenceDestroy;
  decltype(&cublasLtMatmulPreferenceSetAttribute) matmulPreferenceSetAttribute;
  decltype(&cublasLtMatrixLayoutCreate) matrixLayoutCreate;
  decltype(&cublasLtMatrixLayoutDestroy) matrixLayoutDestroy;
  decltype(&cublasLtMatrixLayoutSetAttribute) matrixLayoutSetAttribute;
};

// The library's functions, loaded on the first call (thread-safe). A library that cannot be
// opened, or lacks one of them, is a runtime error (exit 3) naming it.
const CublasLtApi& cublasLt();

}  // namespace gxc
