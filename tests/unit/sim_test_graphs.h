// Hand-written scheduled graphs (the IR that assign-streams produces) and the host oracle
// the sim executor tests compare against. parse() plans their memory and schedules them
// again, as the pipeline would: the executors place activations where plan-memory says, and
// assign-streams adds the waits that order the reuse of their bytes.
#pragma once

#include <map>
#include <memory>
#include <regex>
#include <string>

#include "ir/parser.h"
#include "passes/pass_manager.h"
#include "runtime/host/host_executor.h"
#include "runtime/param_init.h"

namespace gxc::simtest {

// The small VeryBigModule on two GPUs, as the passes schedule it.
inline const char* const kVeryBigModule = R"(
graph @vbm(%x: f32[200,8] @cpu) -> (y) attributes {seed = 0} {
  %W1 = param {init = "normal", name = "W1", seed = 0} : f32[1000,200] @cuda:0
  %W2 = param {init = "normal", name = "W2", seed = 0} : f32[200,1000] @cuda:1
  %x.cuda0 = copy %x {record = 0, stream = "cuda:0.h2d"} : f32[200,8] @cpu -> @cuda:0
  %h = matmul %W1, %x.cuda0 {stream = "cuda:0.compute", wait = [0], record = 1} : f32[1000,8] @cuda:0
  %h.cuda1 = copy %h {stream = "cuda:1.d2d", wait = [1], record = 2} : f32[1000,8] @cuda:0 -> @cuda:1
  %y = matmul %W2, %h.cuda1 {stream = "cuda:1.compute", wait = [2], record = 3} : f32[200,8] @cuda:1
  %y.cpu = copy %y {stream = "cuda:1.d2h", wait = [3]} : f32[200,8] @cuda:1 -> @cpu
  return %y.cpu
}
)";

// The same input on four GPUs, each computing its own branch concurrently; cuda:0 gathers
// and sums the branches, the host gets the sum and one branch's activation.
inline const char* const kFourBranches = R"(
graph @branches(%x: f32[64,32] @cpu) -> (sum, r3) attributes {seed = 3} {
  %w0 = param {init = "normal", name = "w0", seed = 3} : f32[48,32] @cuda:0
  %w1 = param {init = "normal", name = "w1", seed = 3} : f32[48,32] @cuda:1
  %w2 = param {init = "normal", name = "w2", seed = 3} : f32[48,32] @cuda:2
  %w3 = param {init = "normal", name = "w3", seed = 3} : f32[48,32] @cuda:3
  %b3 = param {init = "uniform", name = "b3", seed = 3} : f32[48] @cuda:3
  %x.cuda0 = copy %x {stream = "cuda:0.h2d", record = 0} : f32[64,32] @cpu -> @cuda:0
  %x.cuda1 = copy %x {stream = "cuda:1.h2d", record = 1} : f32[64,32] @cpu -> @cuda:1
  %x.cuda2 = copy %x {stream = "cuda:2.h2d", record = 2} : f32[64,32] @cpu -> @cuda:2
  %x.cuda3 = copy %x {stream = "cuda:3.h2d", record = 3} : f32[64,32] @cpu -> @cuda:3
  %l0 = linear %x.cuda0, %w0 {in_features = 32, out_features = 48, stream = "cuda:0.compute", wait = [0]} : f32[64,48] @cuda:0
  %l1 = linear %x.cuda1, %w1 {in_features = 32, out_features = 48, stream = "cuda:1.compute", wait = [1]} : f32[64,48] @cuda:1
  %r1 = relu %l1 {stream = "cuda:1.compute", record = 4} : f32[64,48] @cuda:1
  %l2 = linear %x.cuda2, %w2 {in_features = 32, out_features = 48, stream = "cuda:2.compute", wait = [2]} : f32[64,48] @cuda:2
  %r2 = tanh %l2 {stream = "cuda:2.compute", record = 5} : f32[64,48] @cuda:2
  %l3 = linear %x.cuda3, %w3, %b3 {in_features = 32, out_features = 48, stream = "cuda:3.compute", wait = [3]} : f32[64,48] @cuda:3
  %r3 = sigmoid %l3 {stream = "cuda:3.compute", record = 6} : f32[64,48] @cuda:3
  %r1.cuda0 = copy %r1 {stream = "cuda:0.d2d", wait = [4], record = 7} : f32[64,48] @cuda:1 -> @cuda:0
  %r2.cuda0 = copy %r2 {stream = "cuda:0.d2d", wait = [5], record = 8} : f32[64,48] @cuda:2 -> @cuda:0
  %r3.cuda0 = copy %r3 {stream = "cuda:0.d2d", wait = [6], record = 9} : f32[64,48] @cuda:3 -> @cuda:0
  %s01 = add %l0, %r1.cuda0 {stream = "cuda:0.compute", wait = [7]} : f32[64,48] @cuda:0
  %s012 = add %s01, %r2.cuda0 {stream = "cuda:0.compute", wait = [8]} : f32[64,48] @cuda:0
  %sum = add %s012, %r3.cuda0 {stream = "cuda:0.compute", wait = [9], record = 10} : f32[64,48] @cuda:0
  %sum.cpu = copy %sum {stream = "cuda:0.d2h", wait = [10]} : f32[64,48] @cuda:0 -> @cpu
  %r3.cpu = copy %r3 {stream = "cuda:3.d2h", wait = [6]} : f32[64,48] @cuda:3 -> @cpu
  return %sum.cpu, %r3.cpu
}
)";

inline std::unique_ptr<Graph> parse(const std::string& text) {
  auto graph = parseGraph(text, "scheduled.gxir");
  PassManager manager;
  for (const char* pass : {"plan-memory", "assign-streams"}) manager.add(pass);
  manager.run(*graph, PassContext{});
  return graph;
}

// The inputs a run gets when none are given: the model seed's normal values.
inline std::map<std::string, Tensor> defaultInputs(const Graph& graph) {
  std::map<std::string, Tensor> inputs;
  for (const Value* input : graph.inputs())
    inputs[input->name] = defaultInput(graph, *input, graph.attrs().getInt("seed", 0));
  return inputs;
}

// The oracle: the same graph with every device made the host, run by the `cpu` platform
// (copies become plain host copies): the same generated kernels and host GEMMs as sim,
// so the same bits. The cpu platform itself is held to the reference interpreter by
// cpu_ops_test.cpp and model_numerics_test.cpp.
inline std::map<std::string, Tensor> runOnHost(const std::string& scheduledText,
                                               const std::map<std::string, Tensor>& inputs) {
  std::string hostText = std::regex_replace(scheduledText, std::regex("@cuda:[0-9]+"), "@cpu");
  auto graph = parse(hostText);
  HostExecutor executor(*graph);
  return executor.run(inputs);
}

}  // namespace gxc::simtest
