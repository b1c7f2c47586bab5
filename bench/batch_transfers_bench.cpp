// Transfer batching on virtual H100s: generated models with COUNT small tensors crossing
// devices, compiled by the default pipeline without and with batch-transfers and run on the
// sim platform (2 GPUs). Prints, for one run of each: the copies and the simulated time (the
// sim cost model's clock, SimRunReport::totalMs). Checks that both compilations give the
// same outputs, and that the bench's replay of the clock is the sim's own.
//
// Usage: batch_transfers_bench [COUNT]   (default 200; COUNT even, at least 4)
//   uploads:  COUNT host tensors (the weights [32,32] and biases [32] of COUNT/2 linear
//             layers, 4 KiB and 128 B) read by those layers on cuda:0: host to device;
//   params:   the same as params placed on cuda:0, read by the layers on cuda:1: GPU to GPU;
//   outputs:  COUNT activations [256] (1 KiB) made on cuda:0, all of them outputs: to host.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench/sim_clock_replay.h"
#include "ir/parser.h"
#include "passes/batch_transfers.h"
#include "passes/pass_manager.h"
#include "passes/pipeline.h"
#include "runtime/param_init.h"
#include "runtime/sim/sim_executor.h"

namespace gxc {
namespace {

// COUNT/2 linear layers [32 -> 32] on `layers`, weights and biases from the host (inputs) or
// params on cuda:0.
std::string linearLayers(int count, bool params, const char* layers) {
  std::string inputs = "%x: f32[8,32] @cpu", decls, body, previous = "%x";
  for (int i = 0; i < count / 2; ++i) {
    if (params)
      decls += fmt::format(
          "  %w{0} = param {{init = \"normal\", name = \"w{0}\", seed = 0}} : f32[32,32] @cuda:0\n"
          "  %b{0} = param {{init = \"normal\", name = \"b{0}\", seed = 0}} : f32[32] @cuda:0\n",
          i);
    else
      inputs += fmt::format(", %w{0}: f32[32,32] @cpu, %b{0}: f32[32] @cpu", i);
    body += fmt::format(
        "  %h{0} = linear {1}, %w{0}, %b{0} {{in_features = 32, out_features = 32}} : f32[8,32] "
        "@{2}\n",
        i, previous, layers);
    previous = fmt::format("%h{}", i);
  }
  return fmt::format("graph @layers({}) -> (y) {{\n{}{}  return {}\n}}\n", inputs, decls, body,
                     previous);
}

std::string uploads(int count) { return linearLayers(count, false, "cuda:0"); }
std::string params(int count) { return linearLayers(count, true, "cuda:1"); }

std::string outputs(int count) {
  std::string inputs, body, names, values;
  for (int i = 0; i < count; ++i) {
    inputs += fmt::format("{}%x{}: f32[256] @cuda:0", i ? ", " : "", i);
    body += fmt::format("  %a{0} = tanh %x{0} : f32[256] @cuda:0\n", i);
    names += fmt::format("{}a{}", i ? ", " : "", i);
    values += fmt::format("{}%a{}", i ? ", " : "", i);
  }
  return fmt::format("graph @outputs({}) -> ({}) {{\n{}  return {}\n}}\n", inputs, names, body,
                     values);
}

struct Result {
  int64_t copies = 0;
  double simulatedMs = 0;
  std::map<std::string, Tensor> outputs;
};

Result compileAndRun(const std::string& text, bool batched) {
  std::unique_ptr<Graph> graph = parseGraph(text, "bench.gxir");
  std::map<std::string, Tensor> inputs;
  for (const Value* input : graph->inputs()) inputs[input->name] = defaultInput(*graph, *input, 0);
  std::vector<std::string> passes = defaultPipeline();
  passes.erase(std::remove(passes.begin(), passes.end(), "batch-transfers"), passes.end());
  PassManager manager;
  for (const std::string& pass : passes) {
    manager.add(pass);
    if (pass == "insert-copies" && batched) manager.add(std::make_unique<BatchTransfersPass>());
  }
  PassContext context;
  context.target = Target::of({Device::cuda(0), Device::cuda(1)});
  manager.run(*graph, context);
  SimConfig config;
  config.gpus = 2;
  SimRunReport report;
  Result result;
  result.outputs = SimExecutor(*graph, config).run(inputs, &report);
  result.simulatedMs = report.totalMs;
  for (const SimDeviceReport& device : report.devices) result.copies += device.copiesIn;
  checkReplayMatchesSim(*graph, report);
  return result;
}

bool sameOutputs(const Result& a, const Result& b) {
  if (a.outputs.size() != b.outputs.size()) return false;
  for (const auto& [name, tensor] : a.outputs) {
    auto it = b.outputs.find(name);
    if (it == b.outputs.end() || it->second.nbytes() != tensor.nbytes() ||
        std::memcmp(it->second.data(), tensor.data(), tensor.nbytes()) != 0)
      return false;
  }
  return true;
}

int benchMain(int argc, char** argv) {
  int count = argc > 1 ? std::atoi(argv[1]) : 200;
  if (count < 4 || count % 2) {
    std::fprintf(stderr, "usage: batch_transfers_bench [COUNT]   (COUNT even, at least 4)\n");
    return 2;
  }
  struct Scenario {
    const char* name;
    std::string (*generate)(int);
  };
  const Scenario scenarios[] = {{"uploads", uploads}, {"params", params}, {"outputs", outputs}};
  std::printf("%d small tensors per model, 2 virtual H100s, simulated ms of one run\n", count);
  std::printf("%-8s | %6s %8s | %7s %8s %8s\n", "model", "copies", "batched", "sim", "batched",
              "speedup");
  for (const Scenario& scenario : scenarios) {
    std::string text = scenario.generate(count);
    Result plain = compileAndRun(text, false), batched = compileAndRun(text, true);
    if (!sameOutputs(plain, batched)) {
      std::fprintf(stderr, "%s: outputs differ with batch-transfers\n", scenario.name);
      return 1;
    }
    std::printf("%-8s | %6lld %8lld | %7.3f %8.3f %7.2fx\n", scenario.name,
                static_cast<long long>(plain.copies), static_cast<long long>(batched.copies),
                plain.simulatedMs, batched.simulatedMs, plain.simulatedMs / batched.simulatedMs);
  }
  return 0;
}

}  // namespace
}  // namespace gxc

int main(int argc, char** argv) {
  return gxc::runBench("batch_transfers_bench", gxc::benchMain, argc, argv);
}
