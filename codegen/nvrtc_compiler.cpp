#include "codegen/nvrtc_compiler.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nvrtc.h>

#include <algorithm>
#include <filesystem>
#include <memory>

#include "codegen/cuda_source.h"
#include "codegen/nvrtc_library.h"
#include "ir/diagnostic.h"
#include "ir/progress.h"

namespace gxc {
namespace {

constexpr const char* kProgramName = "gxc_graph.cu";

// NVRTC calls that cannot fail on valid arguments; a failure is a gxc bug.
void checkNvrtc(nvrtcResult result, const char* call) {
  GXC_CHECK(result == NVRTC_SUCCESS, "{} failed: {}", call, nvrtc().getErrorString(result));
}

std::vector<int> supportedArchs() {
  int count = 0;
  checkNvrtc(nvrtc().getNumSupportedArchs(&count), "nvrtcGetNumSupportedArchs");
  std::vector<int> archs(static_cast<size_t>(count));
  checkNvrtc(nvrtc().getSupportedArchs(archs.data()), "nvrtcGetSupportedArchs");
  return archs;
}

void checkSupported(const GpuArch& arch) {
  std::vector<int> archs = supportedArchs();
  if (std::find(archs.begin(), archs.end(), arch.number()) != archs.end()) return;
  std::vector<std::string> names;
  for (int number : archs) names.push_back(fmt::format("sm_{}", number));
  usageError("--arch {}: NVRTC {} does not support it (it supports {})", arch.str(),
             nvrtcVersionString(), fmt::join(names, ", "));
}

// The line a user needs first: NVRTC's first error, "gxc_graph.cu(12): error: ...".
std::string firstErrorLine(const std::string& log) {
  size_t start = 0;
  std::string firstLine;
  while (start < log.size()) {
    size_t end = std::min(log.find('\n', start), log.size());
    std::string line = log.substr(start, end - start);
    if (firstLine.empty() && !line.empty()) firstLine = line;
    if (line.find("error") != std::string::npos) return line;
    start = end + 1;
  }
  return firstLine.empty() ? "no message" : firstLine;
}

std::string compile(const std::string& cudaSource, const std::string& headerText,
                    const GpuArch& arch, const std::vector<std::string>& options) {
  const char* headers[] = {headerText.c_str()};
  const char* headerNames[] = {kKernelHeaderName};
  nvrtcProgram raw = nullptr;
  checkNvrtc(nvrtc().createProgram(&raw, cudaSource.c_str(), kProgramName, 1, headers, headerNames),
             "nvrtcCreateProgram");
  std::unique_ptr<nvrtcProgram, void (*)(nvrtcProgram*)> program(
      &raw, [](nvrtcProgram* p) { nvrtc().destroyProgram(p); });
  std::vector<const char*> optionPointers;
  for (const std::string& option : options) optionPointers.push_back(option.c_str());
  nvrtcResult result =
      nvrtc().compileProgram(raw, static_cast<int>(optionPointers.size()), optionPointers.data());
  if (result != NVRTC_SUCCESS) {
    size_t logSize = 0;
    checkNvrtc(nvrtc().getProgramLogSize(raw, &logSize), "nvrtcGetProgramLogSize");
    std::string log(logSize, '\0');
    checkNvrtc(nvrtc().getProgramLog(raw, log.data()), "nvrtcGetProgramLog");
    runtimeError({}, "NVRTC could not compile the graph's kernels for {}: {}", arch.str(),
                 firstErrorLine(log));
  }
  size_t ptxSize = 0;
  checkNvrtc(nvrtc().getPTXSize(raw, &ptxSize), "nvrtcGetPTXSize");
  std::string ptx(ptxSize, '\0');
  checkNvrtc(nvrtc().getPTX(raw, ptx.data()), "nvrtcGetPTX");
  while (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();  // the size counts the NUL
  return ptx;
}

}  // namespace

bool nvrtcAvailable() { return true; }

std::string nvrtcVersionString() {
  int major = 0, minor = 0;
  checkNvrtc(nvrtc().version(&major, &minor), "nvrtcVersion");
  return fmt::format("{}.{}", major, minor);
}

std::vector<std::string> nvrtcOptions(const GpuArch& arch) {
  // No fast math: generated kernels are checked against the reference interpreter, and
  // --use_fast_math's approximate exp/tanh would not match it within f32 tolerance.
  // No contraction either (--fmad=false; NVRTC's default is true): the host builds the same
  // kernels without fused multiply-adds (codegen/host_kernel_library.cpp, -ffp-contract=off),
  // so every +, -, * and / rounds on a GPU exactly as on the host, and a kernel's answers
  // differ between the platforms only by their math functions and reduction order. The
  // kernels are memory-bound, so the separate multiply and add cost nothing that shows.
  std::vector<std::string> options = {"--gpu-architecture=" + arch.virtualArch(), "--std=c++17",
                                      "--fmad=false"};
  // NVRTC has no built-in cuda_fp16.h / cuda_bf16.h: a header that includes them finds them
  // in the toolkit the build used, when that toolkit is still where it was.
#ifdef GXC_CUDA_INCLUDE_DIR
  std::error_code error;
  if (std::filesystem::is_directory(GXC_CUDA_INCLUDE_DIR, error))
    options.push_back(std::string("--include-path=") + GXC_CUDA_INCLUDE_DIR);
#endif
  return options;
}

std::string compileGraphPtx(const std::string& cudaSource, const std::string& headerText,
                            const GpuArch& arch, KernelCache& cache) {
  checkSupported(arch);
  std::vector<std::string> options = nvrtcOptions(arch);
  std::vector<std::string> key = {"nvrtc " + nvrtcVersionString(), arch.str(),
                                  fmt::format("{}", fmt::join(options, " ")), headerText,
                                  cudaSource};
  return cache.getOrBuild("ptx", key, [&] {
    ProgressTask building(fmt::format("compiling {} generated kernels with NVRTC for {}",
                                      definedKernelCount(cudaSource), arch.str()),
                          0);
    return compile(cudaSource, headerText, arch, options);
  });
}

}  // namespace gxc
