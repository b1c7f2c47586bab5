// NVRTC compilation (codegen/nvrtc_compiler.h): runs wherever the CUDA toolkit is, GPU or not;
// built everywhere, and skipped, saying why, in a build without it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include "codegen/nvrtc_compiler.h"
#include "cuda_test_helpers.h"
#include "ir/diagnostic.h"

namespace gxc {
namespace {

// A hand-written stand-in for codegen's output: the header defines the argument block, the
// translation unit includes it by name and holds two kernels.
const char* const kHeader = R"(
#pragma once
struct GxcArgs { void* p[4]; };
__device__ inline float gxc_relu(float x) { return x > 0.0f ? x : 0.0f; }
)";

const char* const kSource = R"(
#include "gxc_kernel.h"
extern "C" __global__ void gxc_k0_add(GxcArgs args) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < 1000) ((float*)args.p[0])[i] = ((const float*)args.p[1])[i] + ((const float*)args.p[2])[i];
}
extern "C" __global__ void gxc_k1_relu(GxcArgs args) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < 1000) ((float*)args.p[0])[i] = gxc_relu(((const float*)args.p[1])[i]);
}
)";

class NvrtcCompilerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    GXC_REQUIRE_NVRTC();
    directory_ = std::filesystem::temp_directory_path() /
                 ("gxc-nvrtc-test-" + std::to_string(std::random_device{}()));
  }
  void TearDown() override { std::filesystem::remove_all(directory_); }
  std::filesystem::path directory_;
};

TEST_F(NvrtcCompilerTest, CompilesEveryKernelOfTheGraphIntoOnePtxModule) {
  KernelCache cache(std::nullopt);
  std::string ptx = compileGraphPtx(kSource, kHeader, parseGpuArch("sm_90"), cache);
  EXPECT_NE(ptx.find(".target sm_90"), std::string::npos);
  EXPECT_NE(ptx.find(".entry gxc_k0_add"), std::string::npos);
  EXPECT_NE(ptx.find(".entry gxc_k1_relu"), std::string::npos);
  EXPECT_EQ(cache.stats().compiles, 1);  // one NVRTC program for both kernels
  EXPECT_EQ(ptx.find('\0'), std::string::npos);
}

TEST_F(NvrtcCompilerTest, PtxAssemblesWithPtxasForSm80AndSm90) {
#ifndef GXC_PTXAS
  GTEST_SKIP() << "ptxas was not found with the CUDA toolkit";
#else
  KernelCache cache(std::nullopt);
  std::filesystem::create_directories(directory_);
  for (const char* arch : {"sm_80", "sm_90"}) {
    std::filesystem::path file = directory_ / (std::string(arch) + ".ptx");
    std::ofstream(file) << compileGraphPtx(kSource, kHeader, parseGpuArch(arch), cache);
    std::string command = std::string(GXC_PTXAS) + " -arch=" + arch + " " + file.string() + " -o " +
                          (directory_ / (std::string(arch) + ".cubin")).string();
    EXPECT_EQ(std::system(command.c_str()), 0) << command;
  }
#endif
}

TEST_F(NvrtcCompilerTest, TheCacheIsKeyedByArchitectureAndSource) {
  KernelCache cache(directory_);
  std::string first = compileGraphPtx(kSource, kHeader, parseGpuArch("sm_90"), cache);
  EXPECT_EQ(compileGraphPtx(kSource, kHeader, parseGpuArch("sm_90"), cache), first);
  EXPECT_EQ(cache.stats().compiles, 1);
  EXPECT_EQ(cache.stats().hits, 1);
  std::string sm80 = compileGraphPtx(kSource, kHeader, parseGpuArch("sm_80"), cache);
  EXPECT_NE(sm80.find(".target sm_80"), std::string::npos);
  compileGraphPtx(std::string(kSource) + "\n// changed\n", kHeader, parseGpuArch("sm_90"), cache);
  compileGraphPtx(kSource, std::string(kHeader) + "\n// changed\n", parseGpuArch("sm_90"), cache);
  EXPECT_EQ(cache.stats().compiles, 4);
  // A fresh cache over the same directory (the next gxc process) reads them all back.
  KernelCache again(directory_);
  EXPECT_EQ(compileGraphPtx(kSource, kHeader, parseGpuArch("sm_80"), again), sm80);
  EXPECT_EQ(again.stats().hits, 1);
  EXPECT_EQ(again.stats().compiles, 0);
}

TEST_F(NvrtcCompilerTest, ACompileErrorIsARuntimeErrorWithNvrtcsFirstErrorLine) {
  KernelCache cache(directory_);
  std::string broken =
      std::string(kSource) + "\nextern \"C\" __global__ void bad(GxcArgs a) { undeclared = 1; }\n";
  try {
    compileGraphPtx(broken, kHeader, parseGpuArch("sm_90"), cache);
    FAIL() << "compiled";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::Runtime);
    EXPECT_EQ(error.message().rfind("NVRTC could not compile the graph's kernels for sm_90: "
                                    "gxc_graph.cu(",
                                    0),
              0u)
        << error.message();
    EXPECT_NE(error.message().find("error: identifier \"undeclared\" is undefined"),
              std::string::npos)
        << error.message();
    EXPECT_EQ(error.message().find('\n'), std::string::npos);
  }
  // Nothing was cached: the directory holds no entry.
  EXPECT_FALSE(std::filesystem::exists(directory_) && !std::filesystem::is_empty(directory_));
}

TEST_F(NvrtcCompilerTest, AnArchitectureNvrtcDoesNotSupportIsAUsageError) {
  KernelCache cache(std::nullopt);
  try {
    compileGraphPtx(kSource, kHeader, parseGpuArch("sm_35"), cache);
    FAIL() << "compiled for sm_35";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::Usage);
    EXPECT_NE(error.message().find("--arch sm_35: NVRTC " + nvrtcVersionString() +
                                   " does not support it (it supports "),
              std::string::npos)
        << error.message();
    EXPECT_NE(error.message().find("sm_90"), std::string::npos);
  }
}

TEST_F(NvrtcCompilerTest, OptionsNameTheVirtualArchitecture) {
  std::vector<std::string> options = nvrtcOptions(parseGpuArch("sm_80"));
  ASSERT_FALSE(options.empty());
  EXPECT_EQ(options[0], "--gpu-architecture=compute_80");
}

// Every build has the interface; one without the CUDA toolkit says, in one line, that it has
// no NVRTC (the driver refuses --emit ptx before this: tests/lit/cli/no-cuda-build.test).
TEST(NvrtcAvailability, ABuildWithoutCudaSaysItHasNoNvrtc) {
  if (nvrtcAvailable()) {
    EXPECT_NE(nvrtcVersionString().find('.'), std::string::npos) << nvrtcVersionString();
    return;
  }
  KernelCache cache(std::nullopt);
  try {
    compileGraphPtx(kSource, kHeader, parseGpuArch("sm_90"), cache);
    FAIL() << "compiled without NVRTC";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::Usage);
    EXPECT_EQ(formatError(error),
              "gxc: error: NVRTC: this gxc was built without CUDA (NVRTC is part of the CUDA "
              "toolkit)");
  }
}

// --fmad=false: a multiply then an add stay two instructions, each rounded (mul.rn, add.rn:
// ptxas may not fuse those either), as the host build of the same kernel rounds them.
TEST_F(NvrtcCompilerTest, MultiplyAddIsNotContractedIntoAnFma) {
  std::vector<std::string> options = nvrtcOptions(parseGpuArch("sm_90"));
  EXPECT_NE(std::find(options.begin(), options.end(), "--fmad=false"), options.end());
  const char* source = R"(
#include "gxc_kernel.h"
extern "C" __global__ void gxc_k0_madd(GxcArgs args) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  const float* a = (const float*)args.p[1];
  if (i < 1000) ((float*)args.p[0])[i] = a[i] * ((const float*)args.p[2])[i] + a[i + 1];
}
)";
  KernelCache cache(std::nullopt);
  std::string ptx = compileGraphPtx(source, kHeader, parseGpuArch("sm_90"), cache);
  EXPECT_EQ(ptx.find("fma."), std::string::npos) << ptx;
  EXPECT_NE(ptx.find("mul.rn.f32"), std::string::npos) << ptx;
  EXPECT_NE(ptx.find("add.rn.f32"), std::string::npos) << ptx;
}

}  // namespace
}  // namespace gxc
