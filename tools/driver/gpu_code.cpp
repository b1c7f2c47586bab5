#include "tools/driver/gpu_code.h"

#include "codegen/cuda_source.h"
#include "codegen/kernel_cache.h"
#include "ir/diagnostic.h"
#include "runtime/cuda/gpu_devices.h"
#ifdef GXC_HAVE_CUDA
#include "codegen/nvrtc_compiler.h"
#endif

namespace gxc {

std::optional<GpuArch> parseArchOption(const std::string& text) {
  if (text.empty()) return std::nullopt;
  GpuArch arch = parseGpuArch(text);
  if (!builtWithCuda())
    usageError("--arch {}: this gxc was built without CUDA, so it generates no GPU code", text);
  return arch;
}

std::string emitGpuCode(const Graph& graph, const std::string& emit, const GpuArch& arch) {
  CudaSource source = generateCudaSource(graph);
  if (emit == "cuda") return source.text;
#ifdef GXC_HAVE_CUDA
  KernelCache cache = KernelCache::fromEnvironment();
  return compileGraphPtx(source.text, std::string(kernelHeaderText()), arch, cache);
#else
  usageError("--emit ptx: this gxc was built without CUDA (NVRTC is part of the CUDA toolkit)");
#endif
}

}  // namespace gxc
