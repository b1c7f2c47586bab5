// NVRTC: a graph's generated CUDA C++ compiled to PTX, through the on-disk kernel cache.
//
// What it does: compiles ONE translation unit holding every kernel of a graph, with the
// kernel header ("gxc_kernel.h") supplied in memory, to PTX for one architecture. One
// program per graph, not one per kernel: NVRTC's fixed cost (seconds for the front end and
// its headers) is paid once, as PyTorch's fusers and CuPy's RawModule do.
// The result is cached (KernelCache, kind "ptx"), keyed by the source, the header, the
// architecture, NVRTC's version and the options, so a change to any of them compiles again.
//
// Requires: nothing: every build has this interface, so code and tests that use it compile
// everywhere. Only a build with the CUDA toolkit (GXC_HAVE_CUDA) has NVRTC; it needs no GPU
// and no driver (NVRTC is a library of the toolkit). In a build without it, nvrtcAvailable()
// is false and the calls below that need NVRTC are a usage error (exit 2) saying so.
// Guarantees: an architecture NVRTC does not support is a usage error (exit 2) listing the
// ones it does; a source that does not compile is a runtime error (exit 3) carrying NVRTC's
// first error line. A failed compilation caches nothing.
#pragma once

#include <string>
#include <vector>

#include "codegen/gpu_arch.h"
#include "codegen/kernel_cache.h"

namespace gxc {

// The name the generated source includes the kernel header by.
inline constexpr const char* kKernelHeaderName = "gxc_kernel.h";

// Whether this gxc has NVRTC (was built with the CUDA toolkit).
bool nvrtcAvailable();

// "13.0": NVRTC's version, part of every cache key.
std::string nvrtcVersionString();

// The options gxc passes to NVRTC for `arch` (part of every cache key).
std::vector<std::string> nvrtcOptions(const GpuArch& arch);

// PTX for every kernel of `cudaSource` (which includes kKernelHeaderName, whose text is
// `headerText`), compiled or read from `cache`.
std::string compileGraphPtx(const std::string& cudaSource, const std::string& headerText,
                            const GpuArch& arch, KernelCache& cache);

}  // namespace gxc
