// The scaled_dot_product_attention kernel (codegen/cuda_source_attention.cpp) at the shapes the
// op fixtures are too small for: keys over several tiles, value widths over several output
// chunks, f16 (whose tiles the host copies as a GPU does), is_causal with fewer queries than
// keys, a bool mask, and a head too wide for a tile in shared memory. Each runs on the cpu
// platform and on one virtual GPU against the reference interpreter, and its kernel text is
// compiled by NVRTC and assembled by ptxas where the CUDA toolkit is.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <regex>
#include <string>

#include <gtest/gtest.h>

#include "output_compare.h"

#include "codegen/cuda_source.h"
#include "codegen/nvrtc_compiler.h"
#include "cuda_test_helpers.h"
#include "ir/parser.h"
#include "ir/verifier.h"
#include "passes/pass_manager.h"
#include "runtime/host/cpu_attention.h"
#include "runtime/host/host_executor.h"
#include "runtime/param_init.h"
#include "runtime/reference/reference_executor.h"
#include "runtime/sim/sim_executor.h"

namespace gxc {
namespace {

struct AttentionCase {
  std::string name;
  std::string ir;  // on the host
  bool sharedTiles = true;
  double tolerance = 1e-5;
  bool library = false;  // the cpu platform runs it through oneDNN (runtime/host/cpu_attention.h)
};

void PrintTo(const AttentionCase& c, std::ostream* out) { *out << c.name; }

std::vector<AttentionCase> cases() {
  return {
      {"keys_over_three_tiles", R"(
graph @a(%q: f32[2,3,5,16] @cpu, %k: f32[2,3,150,16] @cpu, %v: f32[2,3,150,24] @cpu) -> (o) {
  %o = scaled_dot_product_attention %q, %k, %v : f32[2,3,5,24] @cpu
  return %o
})",
       true, 1e-5, true},
      {"f16_causal_two_value_chunks", R"(
graph @a(%q: f16[2,70,8] @cpu, %k: f16[2,90,8] @cpu, %v: f16[2,90,70] @cpu) -> (o) {
  %o = scaled_dot_product_attention %q, %k, %v {is_causal = true} : f16[2,70,70] @cpu
  return %o
})",
       true, 1e-2},
      {"bool_mask_across_tiles", R"(
graph @a(%q: f32[3,6,8] @cpu, %k: f32[3,70,8] @cpu, %v: f32[3,70,8] @cpu, %m: bool[6,70] @cpu) -> (o) {
  %o = scaled_dot_product_attention %q, %k, %v, %m {scale = 0.5} : f32[3,6,8] @cpu
  return %o
})",
       true, 1e-5, true},
      {"bf16_float_mask_across_tiles", R"(
graph @a(%q: bf16[2,5,8] @cpu, %k: bf16[2,130,8] @cpu, %v: bf16[2,130,8] @cpu, %m: bf16[2,1,130] @cpu) -> (o) {
  %o = scaled_dot_product_attention %q, %k, %v, %m : bf16[2,5,8] @cpu
  return %o
})",
       true, 2e-2},
      {"head_too_wide_for_shared_memory", R"(
graph @a(%q: f32[1,2,8200] @cpu, %k: f32[1,3,8200] @cpu, %v: f32[1,3,4] @cpu) -> (o) {
  %o = scaled_dot_product_attention %q, %k, %v {scale = 0.01} : f32[1,2,4] @cpu
  return %o
})",
       false, 1e-5, true},
      // Too little work for the library: the generated kernel runs on the host.
      {"kernel_small_f32", R"(
graph @a(%q: f32[2,4,8] @cpu, %k: f32[2,20,8] @cpu, %v: f32[2,20,8] @cpu) -> (o) {
  %o = scaled_dot_product_attention %q, %k, %v {is_causal = true} : f32[2,4,8] @cpu
  return %o
})"},
      // Large enough for the host's library path: three oneDNN calls instead of the kernel.
      {"library_causal_fewer_queries", R"(
graph @a(%q: f32[2,4,40,32] @cpu, %k: f32[2,4,60,32] @cpu, %v: f32[2,4,60,48] @cpu) -> (o) {
  %o = scaled_dot_product_attention %q, %k, %v {is_causal = true} : f32[2,4,40,48] @cpu
  return %o
})",
       true, 1e-5, true},
      {"library_float_mask_broadcast", R"(
graph @a(%q: f32[2,4,32,64] @cpu, %k: f32[2,4,64,64] @cpu, %v: f32[2,4,64,64] @cpu, %m: f32[2,1,1,64] @cpu) -> (o) {
  %o = scaled_dot_product_attention %q, %k, %v, %m {scale = 0.3} : f32[2,4,32,64] @cpu
  return %o
})",
       true, 1e-5, true},
      {"library_bool_mask", R"(
graph @a(%q: f32[3,64,32] @cpu, %k: f32[3,96,32] @cpu, %v: f32[3,96,16] @cpu, %m: bool[64,96] @cpu) -> (o) {
  %o = scaled_dot_product_attention %q, %k, %v, %m : f32[3,64,16] @cpu
  return %o
})",
       true, 1e-5, true},
  };
}

std::map<std::string, Tensor> inputsOf(const Graph& graph) {
  std::map<std::string, Tensor> inputs;
  for (const Value* input : graph.inputs()) inputs[input->name] = defaultInput(graph, *input, 3);
  return inputs;
}

std::unique_ptr<Graph> parse(const std::string& text) {
  auto graph = parseGraph(text, "attention.gxir");
  std::vector<std::string> problems = verifyGraph(*graph);
  EXPECT_TRUE(problems.empty()) << problems.front();
  return graph;
}

void runPasses(Graph& graph, const Target& target, std::vector<const char*> passes) {
  PassContext context;
  context.target = target;
  PassManager manager;
  for (const char* pass : passes) manager.add(pass);
  manager.run(graph, context);
}

class AttentionKernelTest : public testing::TestWithParam<AttentionCase> {};

TEST_P(AttentionKernelTest, CpuMatchesTheReference) {
  auto graph = parse(GetParam().ir);
  std::map<std::string, Tensor> inputs = inputsOf(*graph);
  auto expected = ReferenceExecutor(*graph).run(inputs);
  runPasses(*graph, Target::of({Device::cpu()}), {"plan-memory"});
  expectOutputsClose(HostExecutor(*graph).run(inputs), expected, GetParam().tolerance);
}

// The generated kernel's GPU paths (shared-memory tiles, warp shuffles) on the host, every
// case: an f32 attention large enough for the library never runs the kernel on cpu or sim.
TEST_P(AttentionKernelTest, EmulatedGpuBlocksMatchTheReference) {
  auto graph = parse(GetParam().ir);
  std::map<std::string, Tensor> inputs = inputsOf(*graph);
  auto expected = ReferenceExecutor(*graph).run(inputs);
  runPasses(*graph, Target::of({Device::cpu()}), {"plan-memory"});
  expectOutputsClose(HostExecutor(*graph, HostLaunchMode{true, 0}).run(inputs), expected,
                     GetParam().tolerance);
}

TEST_P(AttentionKernelTest, SimMatchesTheReference) {
  auto host = parse(GetParam().ir);
  std::map<std::string, Tensor> inputs = inputsOf(*host);
  auto expected = ReferenceExecutor(*host).run(inputs);
  auto graph = parse(std::regex_replace(GetParam().ir, std::regex("@cpu"), "@cuda:0"));
  runPasses(*graph, Target::of({Device::cuda(0)}),
            {"insert-copies", "plan-memory", "assign-streams"});
  SimConfig config;
  config.memoryPerGpu = int64_t{1} << 30;
  expectOutputsClose(SimExecutor(*graph, config).run(inputs), expected, GetParam().tolerance);
}

TEST_P(AttentionKernelTest, RunsInTheHostLibraryWhereItPays) {
  auto graph = parse(GetParam().ir);
  const Op* attention = nullptr;
  for (const Op* op : graph->ops())
    if (op->kind == OpKind::ScaledDotProductAttention) attention = op;
  ASSERT_NE(attention, nullptr);
  EXPECT_EQ(cpuAttentionPays(*attention), GetParam().library);
}

// K and V go through shared memory unless one key's row would not fit there.
TEST_P(AttentionKernelTest, TilesKeysInSharedMemoryWhereTheyFit) {
  std::string text = generateCudaSource(*parse(GetParam().ir)).text;
  EXPECT_EQ(text.find("__shared__ float kTile[") != std::string::npos, GetParam().sharedTiles)
      << text;
}

TEST_P(AttentionKernelTest, AssemblesWithPtxas) {
  GXC_REQUIRE_NVRTC();
#ifndef GXC_PTXAS
  GTEST_SKIP() << "ptxas was not found with the CUDA toolkit";
#else
  auto graph = parse(std::regex_replace(GetParam().ir, std::regex("@cpu"), "@cuda:0"));
  CudaSource source = generateCudaSource(*graph);
  std::filesystem::path directory =
      std::filesystem::temp_directory_path() /
      ("gxc-attention-test-" + std::to_string(std::random_device{}()));
  std::filesystem::create_directories(directory);
  KernelCache cache = KernelCache::fromEnvironment();
  for (const char* arch : {"sm_80", "sm_90"}) {
    std::string ptx =
        compileGraphPtx(source.text, std::string(kernelHeaderText()), parseGpuArch(arch), cache);
    std::filesystem::path file = directory / (std::string(arch) + ".ptx");
    std::ofstream(file) << ptx;
    std::string command = std::string(GXC_PTXAS) + " -arch=" + arch + " " + file.string() + " -o " +
                          (directory / (std::string(arch) + ".cubin")).string();
    EXPECT_EQ(std::system(command.c_str()), 0) << command;
  }
  std::filesystem::remove_all(directory);
#endif
}

// A query row whose mask leaves it no key is NaN, as in the reference and torch; the other
// rows are unaffected. On the library path, where oneDNN's softmax never sees such a row.
TEST(AttentionLibraryTest, RowThatAttendsNothingIsNaN) {
  auto graph = parse(R"(
graph @a(%q: f32[4,64,32] @cpu, %k: f32[4,96,32] @cpu, %v: f32[4,96,16] @cpu, %m: bool[64,96] @cpu) -> (o) {
  %o = scaled_dot_product_attention %q, %k, %v, %m : f32[4,64,16] @cpu
  return %o
})");
  std::map<std::string, Tensor> inputs = inputsOf(*graph);
  Tensor& mask = inputs.at("m");
  for (int64_t i = 0; i < mask.numel(); ++i) mask.storeInt(i, i / 96 == 5 ? 0 : (i % 3 != 0));
  auto expected = ReferenceExecutor(*graph).run(inputs);
  runPasses(*graph, Target::of({Device::cpu()}), {"plan-memory"});
  const Tensor out = HostExecutor(*graph).run(inputs).at("o");
  const Tensor& want = expected.at("o");
  for (int64_t i = 0; i < out.numel(); ++i) {
    bool emptyRow = i / 16 % 64 == 5;
    ASSERT_EQ(std::isnan(want.loadFloat(i)), emptyRow) << "the reference at " << i;
    if (emptyRow)
      EXPECT_TRUE(std::isnan(out.loadFloat(i))) << i;
    else
      EXPECT_NEAR(out.loadFloat(i), want.loadFloat(i),
                  1e-5 * std::max(1.0f, std::abs(want.loadFloat(i))))
          << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, AttentionKernelTest, testing::ValuesIn(cases()),
                         [](const testing::TestParamInfo<AttentionCase>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace gxc
