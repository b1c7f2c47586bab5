// codegen/nvrtc_compiler.h in a build without the CUDA toolkit: there is no NVRTC, and every
// call that needs it says so (the driver refuses --emit ptx and --arch before reaching here).
#include "codegen/nvrtc_compiler.h"

#include "ir/diagnostic.h"

namespace gxc {
namespace {

[[noreturn]] void refuse() {
  usageError("NVRTC: this gxc was built without CUDA (NVRTC is part of the CUDA toolkit)");
}

}  // namespace

bool nvrtcAvailable() { return false; }

std::string nvrtcVersionString() { refuse(); }

std::vector<std::string> nvrtcOptions(const GpuArch&) { refuse(); }

std::string compileGraphPtx(const std::string&, const std::string&, const GpuArch&, KernelCache&) {
  refuse();
}

}  // namespace gxc
