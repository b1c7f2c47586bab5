// Every case of tests/fixtures/ops.json as one op of ONE graph, compiled by the default
// pipeline: one translation unit (and one kernel build) serves all cases. Shared by the tests
// that run the cases through generated kernels: on the host (generated_kernel_fixtures_test.cpp),
// as PTX (nvrtc_fixture_kernels_test.cpp) and on GPUs (cuda_platform_test.cpp).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "tensor/tensor.h"

namespace gxc::fixtures {

struct OpFixtureGraph {
  std::unique_ptr<Graph> graph;
  std::map<std::string, Op*> opOf;  // by case name
  std::map<std::string, Tensor> inputs;
};

// Inputs are on the host, each op on the run's first device of `devices` (a `to` on the host,
// which the pipeline lowers away); every case's result is a graph output named after it.
OpFixtureGraph buildOpFixtureGraph(const std::vector<Device>& devices);

}  // namespace gxc::fixtures
