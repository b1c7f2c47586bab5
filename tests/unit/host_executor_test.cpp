// The host executor binds each step's operands and result once (runtime/host/host_executor.h):
// what it must still do at every run is read the inputs where that run's caller keeps them,
// whether a step reads an input itself or a view into it at an offset.
#include "runtime/host/host_executor.h"

#include <gtest/gtest.h>

#include "frontend/model_loader.h"
#include "passes/pass_manager.h"
#include "passes/pipeline.h"
#include "runtime/reference/reference_executor.h"

namespace gxc {
namespace {

// x itself (z), and rows 1..3 of it (a slice off axis 0: a view at 6 floats in).
const char* kReadsTheInputAndAViewOfIt =
    "gxc: 1\nname: inputs\n"
    "inputs:\n  x: {shape: [4, 6]}\n"
    "layers:\n"
    "  - {name: tail, op: slice, inputs: [x], axis: 0, start: 1, end: 4}\n"
    "  - {name: y, op: relu, inputs: [tail]}\n"
    "  - {name: z, op: add, inputs: [x, x]}\n"
    "outputs: [y, z]\n";

std::map<std::string, Tensor> inputsFrom(float first) {
  Tensor x(DType::F32, {4, 6});
  for (int64_t i = 0; i < x.numel(); ++i) x.storeFloat(i, first - static_cast<float>(i));
  return {{"x", std::move(x)}};
}

TEST(HostExecutorTest, EachRunReadsTheInputsItsCallerPasses) {
  auto graph = loadModelFromString(kReadsTheInputAndAViewOfIt, "inputs.yaml", GXC_SOURCE_DIR);
  PassContext context;
  context.target = Target::of({Device::cpu()});
  PassManager(defaultPipeline()).run(*graph, context);
  HostExecutor host(*graph);
  ReferenceExecutor reference(*graph);
  for (float first : {10.0f, 3.0f, -5.0f}) {
    // A fresh map each run: its tensors lie elsewhere in memory than the run before's.
    std::map<std::string, Tensor> inputs = inputsFrom(first);
    std::map<std::string, Tensor> actual = host.run(inputs), expected = reference.run(inputs);
    for (const char* output : {"y", "z"}) {
      const Tensor &a = actual.at(output), &e = expected.at(output);
      ASSERT_EQ(a.shape(), e.shape()) << output;
      for (int64_t i = 0; i < e.numel(); ++i)
        EXPECT_EQ(a.loadFloat(i), e.loadFloat(i))
            << output << " element " << i << ", x from " << first;
    }
  }
}

}  // namespace
}  // namespace gxc
