#include "runtime/cuda/cuda_cublaslt.h"

#include "codegen/toolkit_library.h"

namespace gxc {
namespace {

CublasLtApi load() {
  const std::string soname = GXC_CUBLASLT_SONAME;
  void* library = openToolkitLibrary(GXC_CUDA_LIBRARY_DIR, soname, "a GEMM on a GPU");
  CublasLtApi api;
  auto resolve = [&](const char* name, auto& function) {
    resolveToolkitFunction(library, soname, name, function);
  };
  resolve("cublasLtCreate", api.create);
  resolve("cublasLtDestroy", api.destroy);
  resolve("cublasLtGetStatusString", api.getStatusString);
  resolve("cublasLtMatmul", api.matmul);
  resolve("cublasLtMatmulAlgoGetHeuristic", api.matmulAlgoGetHeuristic);
  resolve("cublasLtMatmulDescCreate", api.matmulDescCreate);
  resolve("cublasLtMatmulDescDestroy", api.matmulDescDestroy);
  resolve("cublasLtMatmulDescSetAttribute", api.matmulDescSetAttribute);
  resolve("cublasLtMatmulPreferenceCreate", api.matmulPreferenceCreate);
  resolve("cublasLtMatmulPreferenceDestroy", api.matmulPreferenceDestroy);
  resolve("cublasLtMatmulPreferenceSetAttribute", api.matmulPreferenceSetAttribute);
  resolve("cublasLtMatrixLayoutCreate", api.matrixLayoutCreate);
  resolve("cublasLtMatrixLayoutDestroy", api.matrixLayoutDestroy);
  resolve("cublasLtMatrixLayoutSetAttribute", api.matrixLayoutSetAttribute);
  return api;
}

}  // namespace

const CublasLtApi& cublasLt() {
  static const CublasLtApi api = load();
  return api;
}

}  // namespace gxc
