// The finite-difference check of the autodiff tests (autodiff_test.cpp,
// autodiff_network_ops_test.cpp): each model computes a 0-d loss from params through the ops
// under test; the gradients autodiff writes as outputs (grad.NAME) must match
// (loss(p + h) - loss(p - h)) / 2h at every checked element (every element of a param of at
// most kEveryElementUpTo, else about seven). The reference interpreter runs both, so only the
// rules are under test there; then the same training graph, compiled by the default pipeline
// with autodiff, runs its backward as the host's generated kernels and library calls, and as
// emulated GPU launches on a virtual GPU, and every gradient must be the reference's (f64 at
// 1e-12): the kernels of every rule are held to finite differences too.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "ir/graph.h"
#include "tensor/tensor.h"

namespace gxc::autodiff_check {

inline constexpr int64_t kEveryElementUpTo = 256;

// The model in `body` (YAML after the header), through the passes named.
std::unique_ptr<Graph> trainingGraph(const std::string& body, const std::string& passes);

std::map<std::string, Tensor> defaultInputs(const Graph& graph);

// Every gradient output of the model in `body` against finite differences of its loss, then
// the kernels' gradients against the reference's.
void expectGradientsMatchFiniteDifferences(const std::string& body, int expectedGradients);

}  // namespace gxc::autodiff_check
