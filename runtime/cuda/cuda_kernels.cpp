#include "runtime/cuda/cuda_kernels.h"

#include <fmt/format.h>

#include <cstdint>

#include "codegen/cuda_source.h"
#include "codegen/nvrtc_compiler.h"
#include "runtime/cuda/cuda_check.h"

namespace gxc {

CudaProgram buildCudaProgram(const Graph& graph, const GpuArch& arch, KernelCache& cache) {
  CudaSource source = generateCudaSource(graph);
  CudaProgram program;
  for (const CudaKernel& kernel : source.kernels) {
    auto dim = [&](int64_t value, const char* what) {
      GXC_CHECK(value >= 1 && value <= INT32_MAX, "kernel '{}': {} {} out of range", kernel.name,
                what, value);
      return static_cast<unsigned>(value);
    };
    CudaKernelLaunch launch;
    launch.name = kernel.name;
    launch.grid = {dim(kernel.gpu.grid, "grid"), 1, 1};
    launch.block = {dim(kernel.gpu.block, "block"), 1, 1};
    launch.inputs = kernel.inputs;
    (kernel.epilogue ? program.epilogues : program.kernels)[kernel.ops.back()] = std::move(launch);
  }
  if (!program.kernels.empty() || !program.epilogues.empty())
    program.ptx = compileGraphPtx(source.text, std::string(kernelHeaderText()), arch, cache);
  return program;
}

CudaKernelLibrary::CudaKernelLibrary(const std::string& ptx) {
  // The PTX text must be NUL-terminated: std::string's c_str() is.
  checkCuda(cudaLibraryLoadData(&library_, ptx.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0),
            "loading the graph's kernels (PTX)");
}

CudaKernelLibrary::~CudaKernelLibrary() {
  if (library_) cudaLibraryUnload(library_);
}

cudaKernel_t CudaKernelLibrary::kernel(const std::string& name) {
  auto found = kernels_.find(name);
  if (found != kernels_.end()) return found->second;
  cudaKernel_t handle = nullptr;
  cudaError_t status = cudaLibraryGetKernel(&handle, library_, name.c_str());
  cudaGetLastError();
  GXC_CHECK(status == cudaSuccess, "kernel '{}' is not in the graph's PTX: {}", name,
            cudaGetErrorString(status));
  kernels_[name] = handle;
  return handle;
}

void CudaKernelLibrary::launch(const CudaKernelLaunch& launch, const std::vector<void*>& pointers,
                               const CudaStream& stream) {
  const void* function = reinterpret_cast<const void*>(kernel(launch.name));
  // GxcArgs holds a fixed number of pointers; the ones an op does not use stay null.
  size_t offset = 0, bytes = 0;
  checkCuda(cudaFuncGetParamInfo(function, 0, &offset, &bytes),
            fmt::format("kernel '{}' parameters", launch.name));
  size_t slots = bytes / sizeof(void*);
  GXC_CHECK(pointers.size() <= slots, "kernel '{}' takes {} pointers, not {}", launch.name, slots,
            pointers.size());
  std::vector<void*> args(slots, nullptr);
  std::copy(pointers.begin(), pointers.end(), args.begin());
  void* params[] = {args.data()};
  dim3 grid(launch.grid[0], launch.grid[1], launch.grid[2]);
  dim3 block(launch.block[0], launch.block[1], launch.block[2]);
  checkCuda(cudaLaunchKernel(function, grid, block, params, launch.sharedBytes, stream.get()),
            fmt::format("launching kernel '{}' on {}", launch.name, stream.name()));
}

}  // namespace gxc
