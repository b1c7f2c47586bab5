// Generated kernels on the cuda platform: the graph's PTX built and loaded once, its kernels
// launched.
//
// Codegen writes every kernel as `extern "C" __global__ void NAME(GxcArgs args)` with
// `struct GxcArgs { void* p[N]; }`: p[0] the output, then the inputs, shapes baked in, and a
// fixed grid and block per kernel. NVRTC compiles them all into one PTX module
// (codegen/nvrtc_compiler.h); this loads it with the runtime API's library management
// (cudaLibraryLoadData, cudaLibraryGetKernel, cudaLaunchKernel). That API, unlike the driver
// API's cuModuleLoadData, needs no libcuda symbols at link time (cudart_static finds the
// driver when the first call is made), and a library is context-independent: loaded once, its
// kernels launch on whichever GPU is current, so one load serves every GPU of a run.
//
// buildCudaProgram makes that PTX: codegen's translation unit for the whole graph
// (codegen/cuda_source.h) compiled by NVRTC for one architecture through the kernel cache.
// A GEMM's epilogue kernel is there too, but launched only where cuBLASLt has no algorithm
// with the epilogue (runtime/cuda/cuda_gemm.h): then it computes the members fused after the
// GEMM, in place, on the GEMM's result.
//
// Requires: PTX for an architecture the GPUs can run (the driver JIT-compiles it at load).
// Guarantees: a kernel name the module lacks, or more pointers than its GxcArgs holds, is a
// gxc bug (GXC_CHECK); load and launch failures are runtime errors (exit 3).
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <map>
#include <string>
#include <vector>

#include "codegen/gpu_arch.h"
#include "codegen/kernel_cache.h"
#include "ir/graph.h"
#include "runtime/cuda/cuda_stream.h"

namespace gxc {

struct CudaKernelLaunch {
  std::string name;
  std::array<unsigned, 3> grid = {1, 1, 1};
  std::array<unsigned, 3> block = {1, 1, 1};
  unsigned sharedBytes = 0;
  std::vector<const Value*> inputs;  // GxcArgs p[1], p[2], ...; p[0] is the root's result
};

// What codegen hands the cuda platform: the graph's PTX, and the kernel of every op that runs
// as a generated kernel (GEMMs go to cuBLASLt, copies to the copy engines; neither is here).
struct CudaProgram {
  std::string ptx;
  std::map<const Op*, CudaKernelLaunch> kernels;  // by the step's root
  // By a fused GEMM step's root: its epilogue kernel, whose inputs[0] is the GEMM's result.
  std::map<const Op*, CudaKernelLaunch> epilogues;
};

// The program of every generated kernel of `graph` (on any device: the text is one unit),
// compiled for `arch` through `cache`; no PTX, and no NVRTC run, when there is no kernel and
// no fused GEMM.
CudaProgram buildCudaProgram(const Graph& graph, const GpuArch& arch, KernelCache& cache);

class CudaKernelLibrary {
 public:
  explicit CudaKernelLibrary(const std::string& ptx);
  ~CudaKernelLibrary();
  CudaKernelLibrary(const CudaKernelLibrary&) = delete;
  CudaKernelLibrary& operator=(const CudaKernelLibrary&) = delete;

  // Launches `launch` on `stream` with GxcArgs {pointers...}.
  void launch(const CudaKernelLaunch& launch, const std::vector<void*>& pointers,
              const CudaStream& stream);

 private:
  cudaKernel_t kernel(const std::string& name);

  cudaLibrary_t library_ = nullptr;
  std::map<std::string, cudaKernel_t> kernels_;
};

}  // namespace gxc
