// Generated kernels run as a GPU launches them, every thread of each block emulated on the host
// (HostLaunchMode::emulateBlocks, codegen/gxc_kernel_emulation.h): the GPU code paths that the
// host's blockDim = 1 never takes (block and warp reductions through shuffles and shared
// memory, __syncthreads, loops strided by blockDim). Every case of tests/fixtures/ops.json, in
// one graph as generated_kernel_fixtures_test.cpp builds them, at 32, 128, 256 and 1024
// threads per block, against the reference interpreter; and kernels with planted faults that a
// GPU would not run (a lane beyond the warp, a barrier in a divergent branch, a write past a
// shared buffer, a shared-memory reduction missing its barrier, a write past a tensor), each
// reported with its block and thread (and the line, where the fault has one).
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "codegen/host_kernel_library.h"
#include "runtime/host/host_generated_kernels.h"
#include "runtime/reference/reference_ops.h"
#include "tests/unit/op_fixture_graph.h"
#include "tests/unit/op_fixtures.h"

namespace gxc {
namespace {

using fixtures::allOpCases;
using fixtures::expectCloseToReference;
using fixtures::OpCase;

constexpr int64_t kBlockSizes[] = {32, 128, 256, 1024};

struct EmulatedGraph : fixtures::OpFixtureGraph {
  std::map<int64_t, std::unique_ptr<HostGeneratedKernels>> kernels;  // by threads per block
};

const EmulatedGraph& emulatedGraph() {
  static const EmulatedGraph built = [] {
    EmulatedGraph g{fixtures::buildOpFixtureGraph({Device::cpu()}), {}};
    for (int64_t block : kBlockSizes)
      g.kernels[block] = std::make_unique<HostGeneratedKernels>(
          *g.graph, KernelCache::fromEnvironment(), HostLaunchMode{true, block});
    return g;
  }();
  return built;
}

// Why a step has no generated kernel to emulate, for the skip's message.
const char* whyNoGeneratedKernel(StepKind kind) {
  switch (kind) {
    case StepKind::Gemm:
      return "a GEMM is the BLAS library's (cuBLAS on a GPU)";
    case StepKind::View:
      return "a view runs nothing: the same bytes seen another way";
    case StepKind::Copy:
      return "a copy moves bytes without a kernel";
    default:
      return "this step runs no generated kernel";
  }
}

class EmulatedLaunchFixtureTest : public testing::TestWithParam<OpCase> {};

TEST_P(EmulatedLaunchFixtureTest, EveryBlockSizeMatchesTheReference) {
  const OpCase& c = GetParam();
  const EmulatedGraph& g = emulatedGraph();
  auto found = g.opOf.find(c.name);
  ASSERT_NE(found, g.opOf.end());
  const Op* op = found->second;
  // Skipped, not passed: a case that checks nothing must not count as one that holds.
  if (op->kind == OpKind::To)
    GTEST_SKIP() << "a `to` the host already satisfies is lowered away: no kernel runs";
  const KernelSteps& steps = g.kernels.begin()->second->steps();
  const KernelStep* step = steps.stepOfRoot(op);
  ASSERT_NE(step, nullptr);
  // GEMMs are cuBLAS's on a GPU and views run nothing: no generated kernel to emulate.
  if (step->kind != StepKind::Generated && step->kind != StepKind::Conv)
    GTEST_SKIP() << whyNoGeneratedKernel(step->kind);
  std::vector<ConstTensorView> inputs;
  for (const Value* value : step->inputs) inputs.push_back(g.inputs.at(value->name).view());
  std::vector<const Tensor*> operands;
  for (const Value* value : op->operands) operands.push_back(&g.inputs.at(value->name));
  Tensor want = evaluateReferenceOp(*op, operands);
  const TensorType& type = op->result->type;
  for (int64_t block : kBlockSizes) {
    Tensor got(type.dtype, type.shape);
    g.kernels.at(block)->run(*step, inputs, got.view());
    expectCloseToReference(got, want, std::to_string(block) + " threads per block: ", c.name);
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, EmulatedLaunchFixtureTest, testing::ValuesIn(allOpCases()),
                         [](const testing::TestParamInfo<OpCase>& info) {
                           return info.param.name;
                         });

// A hand-written kernel source (gxc_kernel.h's ABI), built to emulate GPU blocks.
class PlantedFault {
 public:
  explicit PlantedFault(const std::string& body)
      : library_(
            "#include \"gxc_kernel.h\"\n"
            "extern \"C\" __global__ void planted(GxcArgs args) {\n" +
                body + "}\n",
            cache_, true) {}

  // The launch's report over `values` (in and out in place), empty when it ran.
  std::string launch(std::vector<float>& values, int64_t grid, int64_t block) {
    HostKernelArgs args;
    args.p[0] = values.data();
    return library_.emulatedLaunch(
        library_.kernel("planted"), args, grid, block,
        {{values.data(), static_cast<int64_t>(values.size() * sizeof(float))}});
  }

 private:
  KernelCache cache_ = KernelCache::fromEnvironment();
  HostKernelLibrary library_;
};

// The block's sum through gxc_block_sum: warp shuffles, then shared memory; a correct kernel
// runs, and gives what a GPU gives.
TEST(EmulatedLaunchTest, BlockReductionSumsEveryThreadsValue) {
  PlantedFault kernel(
      "  float* out = (float*)args.p[0];\n"
      "  double total = gxc_block_sum((double)out[blockIdx.x * blockDim.x + threadIdx.x]);\n"
      "  __syncthreads();\n"
      "  if (threadIdx.x == 0) out[blockIdx.x * blockDim.x] = (float)total;\n");
  std::vector<float> values(3 * 256);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 7);
  std::vector<float> sums(3, 0.0f);
  for (size_t i = 0; i < values.size(); ++i) sums[i / 256] += values[i];
  EXPECT_EQ(kernel.launch(values, 3, 256), "");
  for (int b = 0; b < 3; ++b) EXPECT_EQ(values[b * 256], sums[b]) << "block " << b;
}

// A lane beyond the warp: a block of 48 threads has a second warp of 16 lanes, and a
// full-mask shuffle there names lanes 48 to 63, which do not exist.
TEST(EmulatedLaunchTest, CatchesAShuffleReadingALaneBeyondTheBlock) {
  PlantedFault kernel(
      "  float* out = (float*)args.p[0];\n"
      "  out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, out[threadIdx.x], 16);\n");
  std::vector<float> values(48, 1.0f);
  EXPECT_EQ(kernel.launch(values, 1, 48),
            "block 0: thread 32: the shuffle at kernels.cpp:4 names lane 16 in its mask "
            "(0xffffffff), but thread 48 does not exist (the block has 48 threads)");
}

// A shuffle's source lane that the mask leaves out (lanes 0-15 only; lane 15 + 8 is not).
TEST(EmulatedLaunchTest, CatchesAShuffleReadingALaneItsMaskLeavesOut) {
  PlantedFault kernel(
      "  float* out = (float*)args.p[0];\n"
      "  if (threadIdx.x < 16) out[threadIdx.x] = __shfl_down_sync(0xffffu, out[threadIdx.x], "
      "8);\n");
  std::vector<float> values(32, 1.0f);
  EXPECT_EQ(kernel.launch(values, 1, 32),
            "block 0: thread 8 reads lane 16 at the shuffle at kernels.cpp:4, which its mask "
            "(0x0000ffff) leaves out");
}

// A barrier in a branch that not every thread takes.
TEST(EmulatedLaunchTest, CatchesABarrierInADivergentBranch) {
  PlantedFault kernel(
      "  float* out = (float*)args.p[0];\n"
      "  if (threadIdx.x < 40) {\n"
      "    __syncthreads();\n"
      "  }\n"
      "  out[threadIdx.x] = 2.0f;\n");
  std::vector<float> values(64, 1.0f);
  EXPECT_EQ(kernel.launch(values, 2, 64),
            "block 0: thread 0 waits at the __syncthreads at kernels.cpp:5, which thread 40 "
            "never reaches: it has exited (a barrier in a branch that not every thread takes)");
}

// A write past a shared buffer: 64 threads, 32 words.
TEST(EmulatedLaunchTest, CatchesAWritePastASharedBuffer) {
  PlantedFault kernel(
      "  float* out = (float*)args.p[0];\n"
      "  __shared__ float words[32];\n"
      "  words[threadIdx.x] = out[threadIdx.x];\n"
      "  __syncthreads();\n"
      "  out[threadIdx.x] = words[threadIdx.x % 32];\n");
  std::vector<float> values(64, 1.0f);
  EXPECT_EQ(
      kernel.launch(values, 1, 64),
      "block 0: thread 32: index 32 is out of the bounds of 'float [32]' at kernels.cpp:5:20");
}

// A shared-memory reduction without its barrier: thread 0 sums the partials the others write,
// in the same barrier epoch.
TEST(EmulatedLaunchTest, CatchesAReductionMissingItsBarrier) {
  PlantedFault kernel(
      "  float* out = (float*)args.p[0];\n"
      "  __shared__ float partial[64];\n"
      "  partial[threadIdx.x] = out[threadIdx.x];\n"
      "  if (threadIdx.x == 0) {\n"
      "    float total = 0;\n"
      "    for (unsigned i = 0; i < blockDim.x; ++i) total += partial[i];\n"
      "    out[0] = total;\n"
      "  }\n");
  std::vector<float> values(64, 1.0f);
  EXPECT_EQ(kernel.launch(values, 1, 64),
            "block 0: threads 0 and 1 race on shared memory at byte 4: thread 1 writes it after "
            "thread 0 read it, with no __syncthreads between");
  // With the barrier, it runs.
  PlantedFault fixed(
      "  float* out = (float*)args.p[0];\n"
      "  __shared__ float partial[64];\n"
      "  partial[threadIdx.x] = out[threadIdx.x];\n"
      "  __syncthreads();\n"
      "  if (threadIdx.x == 0) {\n"
      "    float total = 0;\n"
      "    for (unsigned i = 0; i < blockDim.x; ++i) total += partial[i];\n"
      "    out[0] = total;\n"
      "  }\n");
  EXPECT_EQ(fixed.launch(values, 1, 64), "");
  EXPECT_EQ(values[0], 64.0f);
}

// A grid-stride loop that runs one element past its tensor.
TEST(EmulatedLaunchTest, CatchesAGlobalWritePastTheOutput) {
  PlantedFault kernel(
      "  float* out = (float*)args.p[0];\n"
      "  for (gxc_i64 i = blockIdx.x * blockDim.x + threadIdx.x; i <= 100;\n"
      "       i += blockDim.x * gridDim.x)\n"
      "    out[i] = 1.0f;\n");
  std::vector<float> values(100, 0.0f);
  std::string report = kernel.launch(values, 2, 64);
  EXPECT_EQ(report.substr(0, report.find(" at 0x")), "block 1: thread 36 writes 4 bytes");
  EXPECT_NE(report.find(", out of bounds: reaching 4 bytes past the end of argument 0 (400 "
                        "bytes, the output)"),
            std::string::npos)
      << report;
}

// Two barriers that the threads of one block reach apart.
TEST(EmulatedLaunchTest, CatchesThreadsWaitingAtDifferentBarriers) {
  PlantedFault kernel(
      "  float* out = (float*)args.p[0];\n"
      "  if (threadIdx.x % 2 == 0) {\n"
      "    __syncthreads();\n"
      "  } else {\n"
      "    __syncthreads();\n"
      "  }\n"
      "  out[threadIdx.x] = 2.0f;\n");
  std::vector<float> values(32, 1.0f);
  EXPECT_EQ(kernel.launch(values, 1, 32),
            "block 0: thread 0 waits at the __syncthreads at kernels.cpp:5 and thread 1 at the "
            "__syncthreads at kernels.cpp:7: they never meet");
}

}  // namespace
}  // namespace gxc
