#include "finite_differences.h"

#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

#include "frontend/model_loader.h"
#include "passes/pass_manager.h"
#include "passes/pipeline.h"
#include "runtime/host/host_executor.h"
#include "runtime/param_init.h"
#include "runtime/reference/reference_executor.h"
#include "runtime/sim/sim_executor.h"
#include "tests/unit/op_fixtures.h"

namespace gxc::autodiff_check {
namespace {

std::unique_ptr<Graph> loadBody(const std::string& body) {
  std::string yaml = "gxc: 1\nname: grads\nseed: 3\n" + body;
  return loadModelFromString(yaml, "grads.yaml", GXC_SOURCE_DIR);
}

// The training graph as the platforms run it: the default pipeline with autodiff before
// assign-devices (as gxc train compiles its step, without the optimizer), for `device`.
std::unique_ptr<Graph> compiledTrainingGraph(const std::string& body, Device device) {
  auto graph = loadBody(body);
  PassContext context;
  context.target = Target::of({device});
  std::vector<std::string> passes = defaultPipeline();
  passes.insert(std::find(passes.begin(), passes.end(), "assign-devices"), "autodiff");
  PassManager(passes).run(*graph, context);
  return graph;
}

// The gradients of the generated kernels on the host, and of their GPU launches emulated on a
// virtual GPU, from the same params and inputs, against the reference's.
void expectKernelsGiveTheReferenceGradients(const std::string& body,
                                            const std::map<std::string, Tensor>& inputs,
                                            const std::map<std::string, Tensor>& params,
                                            const std::map<std::string, Tensor>& expected) {
  for (bool emulated : {false, true}) {
    SCOPED_TRACE(emulated ? "emulated GPU launches" : "host kernels");
    std::map<std::string, Tensor> got;
    if (!emulated) {
      auto graph = compiledTrainingGraph(body, Device::cpu());
      HostExecutor host(*graph);
      host.setParamValues(params);
      got = host.run(inputs);
    } else {
      auto graph = compiledTrainingGraph(body, Device::cuda(0));
      SimConfig config;
      config.memoryPerGpu = int64_t{1} << 30;
      config.launch.emulateBlocks = true;
      SimExecutor sim(*graph, config);
      sim.setParamValues(params);
      got = sim.run(inputs);
    }
    for (const auto& [name, gradient] : expected) {
      if (name.rfind("grad.", 0) != 0) continue;
      ASSERT_TRUE(got.count(name)) << name;
      fixtures::expectCloseToReference(got.at(name), gradient, name + ": ");
    }
  }
}

}  // namespace

std::unique_ptr<Graph> trainingGraph(const std::string& body, const std::string& passes) {
  auto graph = loadBody(body);
  PassContext context;
  context.target = Target::of({Device::cpu()});
  PassManager(parsePassList(passes)).run(*graph, context);
  return graph;
}

std::map<std::string, Tensor> defaultInputs(const Graph& graph) {
  std::map<std::string, Tensor> inputs;
  for (const Value* input : graph.inputs())
    inputs[input->name] = defaultInput(graph, *input, graph.attrs().getInt("seed", 0));
  return inputs;
}

void expectGradientsMatchFiniteDifferences(const std::string& body, int expectedGradients) {
  auto graph = trainingGraph(body, "infer-shapes,autodiff");
  std::map<std::string, Tensor> inputs = defaultInputs(*graph);
  ReferenceExecutor executor(*graph);
  std::map<std::string, Tensor> outputs = executor.run(inputs);
  std::map<std::string, Tensor> params = executor.paramValues();
  int checked = 0;
  for (const auto& [name, gradient] : outputs) {
    if (name.rfind("grad.", 0) != 0) continue;
    ++checked;
    std::string param = name.substr(5);
    ASSERT_TRUE(params.count(param)) << name;
    Tensor original = params.at(param);
    ASSERT_EQ(gradient.shape(), original.shape()) << name;
    int64_t count = original.numel();
    const int64_t stride = count <= kEveryElementUpTo ? 1 : count / 7;
    for (int64_t i = 0; i < count; i += stride) {
      // An f32 param moves by what f32 can hold (the loss is computed in f64 after a cast).
      const double h = original.dtype() == DType::F64 ? 1e-6 : 1e-3;
      auto lossAt = [&](double delta, double& moved) {
        Tensor shifted = original;
        shifted.storeDouble(i, original.loadDouble(i) + delta);
        moved = shifted.loadDouble(i);
        executor.setParamValues({{param, shifted}});
        return executor.run(inputs).at("loss").loadDouble(0);
      };
      double above = 0, below = 0;
      double rise = lossAt(h, above) - lossAt(-h, below);
      double expected = rise / (above - below);
      executor.setParamValues({{param, original}});
      EXPECT_NEAR(gradient.loadDouble(i), expected, 1e-6 * std::max(1.0, std::abs(expected)))
          << name << " element " << i;
    }
  }
  EXPECT_EQ(checked, expectedGradients);
  expectKernelsGiveTheReferenceGradients(body, inputs, params, outputs);
}

}  // namespace gxc::autodiff_check
