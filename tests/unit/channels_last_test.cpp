// The host keeps a convolution's result channels-last where only convolutions read it as their
// image or residual, or max pools read it (runtime/host/channels_last.h): which values qualify,
// and that the answers stay the reference interpreter's.
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "output_compare.h"

#include "ir/parser.h"
#include "ir/verifier.h"
#include "passes/pass_manager.h"
#include "runtime/host/host_executor.h"
#include "runtime/host/host_generated_kernels.h"
#include "runtime/param_init.h"
#include "runtime/reference/reference_executor.h"

namespace gxc {
namespace {

// Seven convolutions, fused by the fuse pass with what follows them: r1 is read by c2 alone,
// as its image; a2 is written with a residual add (which oneDNN's post-ops take); r3 is read by
// c4 and by a neg; r4 is read by c5's epilogue as its residual; r5 is a graph output; r7 is
// read by c8 both as its image and as its residual.
const char* const kGraph = R"(
graph @convs(%x: f32[2,8,6,6] @cpu, %res: f32[2,8,6,6] @cpu) -> (r5, n3, a8) attributes {seed = 2} {
  %w = param {init = "normal", name = "w", seed = 2} : f32[8,8,3,3] @cpu
  %m = param {init = "normal", name = "m", seed = 3} : f32[8] @cpu
  %v = param {high = 2.0, init = "uniform", low = 0.5, name = "v", seed = 4} : f32[8] @cpu
  %c1 = conv2d %x, %w {bias = false, in_channels = 8, kernel_size = 3, out_channels = 8, padding = 1} : f32[2,8,6,6] @cpu
  %n1 = batch_norm %c1, %m, %v {affine = false, num_features = 8} : f32[2,8,6,6] @cpu
  %r1 = relu %n1 : f32[2,8,6,6] @cpu
  %c2 = conv2d %r1, %w {bias = false, in_channels = 8, kernel_size = 3, out_channels = 8, padding = 1} : f32[2,8,6,6] @cpu
  %a2 = add %c2, %res : f32[2,8,6,6] @cpu
  %c3 = conv2d %a2, %w {bias = false, in_channels = 8, kernel_size = 3, out_channels = 8, padding = 1} : f32[2,8,6,6] @cpu
  %r3 = relu %c3 : f32[2,8,6,6] @cpu
  %n3 = neg %r3 : f32[2,8,6,6] @cpu
  %c4 = conv2d %r3, %w {bias = false, in_channels = 8, kernel_size = 3, out_channels = 8, padding = 1} : f32[2,8,6,6] @cpu
  %r4 = relu %c4 : f32[2,8,6,6] @cpu
  %c5 = conv2d %x, %w {bias = false, in_channels = 8, kernel_size = 3, out_channels = 8, padding = 1} : f32[2,8,6,6] @cpu
  %a5 = add %c5, %r4 : f32[2,8,6,6] @cpu
  %r5 = relu %a5 : f32[2,8,6,6] @cpu
  %c7 = conv2d %x, %w {bias = false, in_channels = 8, kernel_size = 3, out_channels = 8, padding = 1} : f32[2,8,6,6] @cpu
  %r7 = relu %c7 : f32[2,8,6,6] @cpu
  %c8 = conv2d %r7, %w {bias = false, in_channels = 8, kernel_size = 3, out_channels = 8, padding = 1} : f32[2,8,6,6] @cpu
  %a8 = add %c8, %r7 : f32[2,8,6,6] @cpu
  return %r5, %n3, %a8
}
)";

std::unique_ptr<Graph> fusedAndPlanned(const char* text = kGraph) {
  auto graph = parseGraph(text, "convs.gxir");
  PassManager manager;
  manager.add("fuse");
  manager.add("plan-memory");
  manager.run(*graph, PassContext{});
  std::vector<std::string> problems = verifyGraph(*graph);
  EXPECT_TRUE(problems.empty()) << problems.front();
  return graph;
}

TEST(ChannelsLastTest, OnlyValuesConvolutionsAloneReadAsTheirImageOrResidual) {
  auto graph = fusedAndPlanned();
  HostGeneratedKernels kernels(*graph);
  std::map<std::string, bool> kept;
  for (const Op* op : graph->ops()) kept[op->result->name] = kernels.channelsLast(op->result);
  EXPECT_TRUE(kept.at("r1"));
  EXPECT_TRUE(kept.at("a2"));
  EXPECT_FALSE(kept.at("r3"));  // a neg reads it too
  EXPECT_TRUE(kept.at("r4"));
  EXPECT_FALSE(kept.at("r5"));  // a graph output
  EXPECT_FALSE(kept.at("r7"));  // image and residual of one step
  // Emulated GPU blocks run the generated kernels, which read NCHW.
  EXPECT_FALSE(HostGeneratedKernels(*graph, KernelCache::fromEnvironment(), HostLaunchMode{true, 0})
                   .channelsLast(graph->ops()[0]->result));
}

TEST(ChannelsLastTest, TheAnswersAreTheReferences) {
  auto graph = fusedAndPlanned();
  std::map<std::string, Tensor> inputs;
  for (const Value* input : graph->inputs()) inputs[input->name] = defaultInput(*graph, *input, 2);
  auto expected = ReferenceExecutor(*graph).run(inputs);
  HostExecutor executor(*graph);
  for (int run = 0; run < 2; ++run) {  // the second with the packed weights
    SCOPED_TRACE(run);
    expectOutputsClose(executor.run(inputs), expected, 1e-4);
  }
}

// Max pools between convolutions (runtime/host/cpu_pool.h), as in a ResNet's stem and first
// block: p1, read by c2 as its image and by c3's epilogue as its residual, stays channels-last,
// and so does r1, which only p1 reads; a3 is read by p2 alone; p2, read by a neg, is written
// NCHW from a channels-last x; p3 pools an input.
const char* const kPools = R"(
graph @pools(%x: f32[2,8,8,8] @cpu) -> (n2, p3) attributes {seed = 2} {
  %w = param {init = "normal", name = "w", seed = 2} : f32[8,8,3,3] @cpu
  %c1 = conv2d %x, %w {bias = false, in_channels = 8, kernel_size = 3, out_channels = 8, padding = 1} : f32[2,8,8,8] @cpu
  %r1 = relu %c1 : f32[2,8,8,8] @cpu
  %p1 = max_pool2d %r1 {kernel_size = 3, padding = 1, stride = 2} : f32[2,8,4,4] @cpu
  %c2 = conv2d %p1, %w {bias = false, in_channels = 8, kernel_size = 3, out_channels = 8, padding = 1} : f32[2,8,4,4] @cpu
  %r2 = relu %c2 : f32[2,8,4,4] @cpu
  %c3 = conv2d %r2, %w {bias = false, in_channels = 8, kernel_size = 3, out_channels = 8, padding = 1} : f32[2,8,4,4] @cpu
  %a3 = add %c3, %p1 : f32[2,8,4,4] @cpu
  %p2 = max_pool2d %a3 {kernel_size = 2} : f32[2,8,2,2] @cpu
  %n2 = neg %p2 : f32[2,8,2,2] @cpu
  %p3 = max_pool2d %x {kernel_size = 2} : f32[2,8,4,4] @cpu
  return %n2, %p3
}
)";

TEST(ChannelsLastTest, MaxPoolsBetweenConvolutions) {
  auto graph = fusedAndPlanned(kPools);
  HostGeneratedKernels kernels(*graph);
  std::map<std::string, bool> kept;
  for (const Op* op : graph->ops()) kept[op->result->name] = kernels.channelsLast(op->result);
  EXPECT_TRUE(kept.at("r1"));
  EXPECT_TRUE(kept.at("p1"));
  EXPECT_TRUE(kept.at("r2"));
  EXPECT_TRUE(kept.at("a3"));
  EXPECT_FALSE(kept.at("p2"));  // a neg reads it
  EXPECT_FALSE(kept.at("p3"));  // of an input, and a graph output

  std::map<std::string, Tensor> inputs;
  for (const Value* input : graph->inputs()) inputs[input->name] = defaultInput(*graph, *input, 2);
  auto expected = ReferenceExecutor(*graph).run(inputs);
  expectOutputsClose(HostExecutor(*graph).run(inputs), expected, 1e-4);
}

}  // namespace
}  // namespace gxc
