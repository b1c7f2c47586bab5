#include "tools/driver/gpu_code.h"

#include "ir/diagnostic.h"
#include "runtime/gpu_devices.h"

namespace gxc {

std::optional<GpuArch> parseArchOption(const std::string& text) {
  if (text.empty()) return std::nullopt;
  GpuArch arch = parseGpuArch(text);
  if (!builtWithCuda())
    usageError("--arch {}: this gxc was built without CUDA, so it generates no GPU code", text);
  return arch;
}

std::string emitGpuCode(const Graph& graph, const std::string& emit, const GpuArch& arch) {
  if (emit == "ptx" && !builtWithCuda())
    usageError("--emit ptx: this gxc was built without CUDA (NVRTC is part of the CUDA toolkit)");
  // Kernel generation lands separately; with it, ptx is
  //   KernelCache cache = KernelCache::fromEnvironment();
  //   return compileGraphPtx(<the graph's CUDA source>, <its kernel header>, arch, cache);
  usageError("--emit {}: not built yet; this gxc can emit ir and dot", emit);
}

}  // namespace gxc
