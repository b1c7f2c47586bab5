// The command line's GPU code options: `--arch sm_XX` and `--emit cuda|ptx`.
#pragma once

#include <optional>
#include <ostream>
#include <string>

#include "codegen/gpu_arch.h"
#include "ir/graph.h"

namespace gxc {

// `--arch` as given (empty: not given). A malformed architecture is a usage error, and so is
// any `--arch` in a build without CUDA, which generates no GPU code.
std::optional<GpuArch> parseArchOption(const std::string& text);

// What `gxc compile --emit cuda|ptx` writes for a compiled graph: its generated kernels as
// CUDA C++, or their PTX from NVRTC for `arch` (codegen/nvrtc_compiler.h, through the
// kernel cache). ptx is refused (exit 2) in a build without CUDA.
std::string emitGpuCode(const Graph& graph, const std::string& emit, const GpuArch& arch);

}  // namespace gxc
