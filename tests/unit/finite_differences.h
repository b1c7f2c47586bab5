// The finite-difference check of the autodiff tests (autodiff_test.cpp,
// autodiff_network_ops_test.cpp): each model computes a 0-d loss from params through the ops
// under test; the gradients autodiff writes as outputs (grad.NAME) must match
// (loss(p + h) - loss(p - h)) / 2h at every checked element. The reference interpreter runs
// both, so only the rules are under test.
#pragma once

#include <cmath>
#include <map>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "frontend/model_loader.h"
#include "passes/pass_manager.h"
#include "runtime/param_init.h"
#include "runtime/reference/reference_executor.h"

namespace gxc::autodiff_check {

inline std::unique_ptr<Graph> trainingGraph(const std::string& body, const std::string& passes) {
  std::string yaml = "gxc: 1\nname: grads\nseed: 3\n" + body;
  auto graph = loadModelFromString(yaml, "grads.yaml", GXC_SOURCE_DIR);
  PassContext context;
  context.target = Target::of({Device::cpu()});
  PassManager(parsePassList(passes)).run(*graph, context);
  return graph;
}

inline std::map<std::string, Tensor> defaultInputs(const Graph& graph) {
  std::map<std::string, Tensor> inputs;
  for (const Value* input : graph.inputs())
    inputs[input->name] = defaultInput(graph, *input, graph.attrs().getInt("seed", 0));
  return inputs;
}

// Every gradient output of the model in `body` against finite differences of its loss.
inline void expectGradientsMatchFiniteDifferences(const std::string& body, int expectedGradients) {
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
    for (int64_t i = 0; i < count; i += std::max<int64_t>(1, count / 7)) {
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
}

}  // namespace gxc::autodiff_check
