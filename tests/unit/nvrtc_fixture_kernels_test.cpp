// The PTX the cuda platform loads, checked where the CUDA toolkit is and no GPU need be: every
// kernel of every op fixture (tests/fixtures/ops.json), of the fused models and of a training
// step, placed on cuda:0, in one translation unit compiled by NVRTC and assembled by ptxas
// (which finds what NVRTC's PTX output alone does not: register and parameter limits,
// malformed PTX). Built in every configuration; skipped, saying why, where there is no NVRTC or
// no ptxas. What the executor builds from that PTX is in cuda_kernels_test.cpp.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "codegen/cuda_source.h"
#include "codegen/nvrtc_compiler.h"
#include "cuda_test_helpers.h"
#include "frontend/model_loader.h"
#include "passes/pass_manager.h"
#include "passes/pipeline.h"
#include "tests/unit/op_fixture_graph.h"

namespace gxc {
namespace {

std::unique_ptr<Graph> compiledModel(const std::string& name) {
  auto graph = loadModel(std::string(GXC_SOURCE_DIR) + "/models/" + name);
  PassContext context;
  context.target = Target::of({Device::cuda(0)});
  PassManager(defaultPipeline()).run(*graph, context);
  return graph;
}

// Compiles `graph`'s kernels for sm_80 and sm_90 and assembles each PTX with ptxas.
void expectPtxAssembles(const Graph& graph, const std::string& what) {
#ifndef GXC_PTXAS
  GTEST_SKIP() << "ptxas was not found with the CUDA toolkit";
#else
  CudaSource source = generateCudaSource(graph);
  ASSERT_FALSE(source.kernels.empty()) << what;
  std::filesystem::path directory = std::filesystem::temp_directory_path() /
                                    ("gxc-ptxas-test-" + std::to_string(std::random_device{}()));
  std::filesystem::create_directories(directory);
  KernelCache cache = KernelCache::fromEnvironment();
  for (const char* arch : {"sm_80", "sm_90"}) {
    std::string ptx =
        compileGraphPtx(source.text, std::string(kernelHeaderText()), parseGpuArch(arch), cache);
    for (const CudaKernel& kernel : source.kernels)
      EXPECT_NE(ptx.find(".entry " + kernel.name + "("), std::string::npos)
          << what << ": " << kernel.name << " is not in the PTX for " << arch;
    std::filesystem::path file = directory / (std::string(arch) + ".ptx");
    std::ofstream(file) << ptx;
    std::string command = std::string(GXC_PTXAS) + " -arch=" + arch + " " + file.string() + " -o " +
                          (directory / (std::string(arch) + ".cubin")).string();
    EXPECT_EQ(std::system(command.c_str()), 0) << what << ": " << command;
  }
  std::filesystem::remove_all(directory);
#endif
}

TEST(NvrtcFixtureKernels, EveryOpFixtureKernelAssemblesWithPtxas) {
  GXC_REQUIRE_NVRTC();
  fixtures::OpFixtureGraph g = fixtures::buildOpFixtureGraph({Device::cuda(0)});
  EXPECT_GT(generateCudaSource(*g.graph).kernels.size(), 80u);
  expectPtxAssembles(*g.graph, "op fixtures");
}

class NvrtcModelKernels : public testing::TestWithParam<std::string> {};

TEST_P(NvrtcModelKernels, FusedModelKernelsAssembleWithPtxas) {
  GXC_REQUIRE_NVRTC();
  expectPtxAssembles(*compiledModel(GetParam() + ".yaml"), GetParam());
}

INSTANTIATE_TEST_SUITE_P(Models, NvrtcModelKernels,
                         testing::Values("transformer_block", "mlp", "losses", "pooling"),
                         [](const testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

// A training step's kernels: the backward's own (max_pool2d_backward, avg_pool2d_backward,
// clamp's select, the grouped convolutions' regrouping) and the optimizer's.
TEST(NvrtcFixtureKernels, TrainingStepKernelsAssembleWithPtxas) {
  GXC_REQUIRE_NVRTC();
  auto graph = loadModel(std::string(GXC_SOURCE_DIR) + "/models/mobile_cnn.yaml");
  PassContext context;
  context.target = Target::of({Device::cuda(0)});
  PassManager(trainingPipeline()).run(*graph, context);
  expectPtxAssembles(*graph, "mobile_cnn's training step");
}

}  // namespace
}  // namespace gxc
