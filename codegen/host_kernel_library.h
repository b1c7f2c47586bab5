// Generated kernels built by the host C++ compiler and loaded into the process: how the
// `cpu` and `sim` platforms run the very CUDA C++ text that GPUs run (see gxc_kernel.h).
//
// The translation unit and gxc_kernel.h are compiled into a shared object with the compiler
// that built gxc (or $GXC_HOST_CXX), -O2 -shared -fPIC and nothing that changes arithmetic
// (no -ffast-math), through the on-disk KernelCache (kind "host-so", keyed by the text, the
// header, the compiler's path and `--version`, and the flags), so a model compiled before
// costs no compile. The object is written to a private temporary file, loaded with dlopen and
// unlinked; kernels are found by name. A compiler failure is a runtime error (exit 3) quoting
// the compiler's first error line.
#pragma once

#include <string>
#include <vector>

#include "codegen/cuda_source.h"
#include "codegen/kernel_cache.h"

namespace gxc {

// The argument block of the kernel ABI (struct GxcArgs of gxc_kernel.h).
struct HostKernelArgs {
  void* p[kMaxKernelArgs] = {};
};

class HostKernelLibrary {
 public:
  using Kernel = void (*)(HostKernelArgs);

  // Builds (or finds in `cache`) and loads the shared object of `text`. With `emulateBlocks`
  // it is built with GXC_EMULATE_BLOCKS and the compiler's bounds and memory-access
  // instrumentation: launches run every thread of each block, as a GPU does, and check what
  // they touch (gxc_kernel_emulation.h), through emulatedLaunch only.
  HostKernelLibrary(const std::string& text, KernelCache& cache, bool emulateBlocks = false);
  HostKernelLibrary(const HostKernelLibrary&) = delete;
  HostKernelLibrary& operator=(const HostKernelLibrary&) = delete;
  ~HostKernelLibrary();

  Kernel kernel(const std::string& name) const;  // a gxc bug if absent
  // Runs every block of the grid, blockDim 1, on the calling thread.
  void launch(Kernel kernel, const HostKernelArgs& args, int64_t grid) const;
  // An emulating library's launch of `grid` blocks of `block` threads, whose global accesses
  // must fall in `buffers` (each tensor's start and bytes: the output's, then the inputs'):
  // empty, or what a GPU would not have run (one line naming the block and the thread).
  std::string emulatedLaunch(Kernel kernel, const HostKernelArgs& args, int64_t grid, int64_t block,
                             const std::vector<std::pair<const void*, int64_t>>& buffers) const;
  bool emulatesBlocks() const { return emulatedLaunch_ != nullptr; }

 private:
  void* handle_ = nullptr;
  void (*launch_)(Kernel, HostKernelArgs, unsigned) = nullptr;
  int (*emulatedLaunch_)(Kernel, HostKernelArgs, unsigned, unsigned, const unsigned long long*,
                         unsigned, char*, unsigned long) = nullptr;
};

// The compiler and flags a host build uses: $GXC_HOST_CXX or the build's compiler.
std::string hostCompiler();
const std::vector<std::string>& hostCompilerFlags();

}  // namespace gxc
