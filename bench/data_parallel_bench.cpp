// Data-parallel on virtual H100s: the wide MLP of bench/models/mlp_wide.yaml (BATCH x 1024 ->
// 4096 -> 4096 -> 1024, batch 4096 by default) compiled by the default pipeline with
// --placement data-parallel for 1, 2 and 4 GPUs; the simulated time of one run (the sim cost
// model's clock, SimRunReport::totalMs) and the speedup over 1 GPU.
//
// The sim platform does the arithmetic for real on the host: 206 GFLOP would take minutes on
// the benchmark machine's two cores. So the bench replays the sim executor's clock over
// the compiled schedule without the arithmetic (as SimExecutor::issue computes it), and
// checks on a small MLP, for every GPU count, that the replay equals SimRunReport::totalMs
// of a real run and that the outputs equal the 1-GPU run's.
//
// Besides the total, each row shows where the time goes: the scatter (the host slicing the
// input and copying each chunk over PCIe: the last chunk's arrival on its GPU), the GEMMs of
// one GPU (its first GEMM's start to its last GEMM's end, the longest over the GPUs), and the
// gather (after the last GEMM: shards to the first GPU over NVLink, their concatenation, the
// output back to the host over PCIe).
//
// Usage: data_parallel_bench [BATCH]   (default 4096)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "bench/sim_clock_replay.h"
#include "frontend/model_loader.h"
#include "passes/pass_manager.h"
#include "passes/pipeline.h"
#include "runtime/param_init.h"
#include "runtime/sim/sim_executor.h"
#include "target/cost_model.h"

namespace gxc {
namespace {

// With `loss`, the MLP ends in mse_loss against a target of the output's shape, as a
// training step's forward does: the output is one number instead of BATCH x OUT.
std::string mlp(int64_t batch, int64_t in, int64_t hidden, int64_t out, bool loss = false) {
  return fmt::format(
      "gxc: 1\n"
      "name: mlp_data_parallel\n"
      "inputs:\n"
      "  x: {{shape: [{0}, {1}]}}\n"
      "{4}"
      "layers:\n"
      "  - {{name: fc1, op: linear, inputs: [x], in_features: {1}, out_features: {2}}}\n"
      "  - {{name: act1, op: relu, inputs: [fc1]}}\n"
      "  - {{name: fc2, op: linear, inputs: [act1], in_features: {2}, out_features: {2}}}\n"
      "  - {{name: act2, op: relu, inputs: [fc2]}}\n"
      "  - {{name: fc3, op: linear, inputs: [act2], in_features: {2}, out_features: {3}}}\n"
      "{5}",
      batch, in, hidden, out,
      loss ? fmt::format("  target: {{shape: [{}, {}]}}\n", batch, out) : "",
      loss ? "  - {name: loss, op: mse_loss, inputs: [fc3, target]}\noutputs: [loss]\n"
           : "outputs: [fc3]\n");
}

std::unique_ptr<Graph> compileFor(const std::string& model, int gpus) {
  auto graph = loadModelFromString(model, "mlp.yaml", ".");
  PassContext context;
  std::vector<Device> devices;
  for (int i = 0; i < gpus; ++i) devices.push_back(Device::cuda(i));
  context.target = Target::of(devices);
  context.placement = "data-parallel";
  PassManager(defaultPipeline()).run(*graph, context);
  return graph;
}

struct Clock {
  double totalMs = 0;
  double scatterMs = 0;  // the last input chunk is on its GPU
  double gemmEndMs = 0;  // the last GEMM ends
  // Per GPU, its first GEMM's start and its last GEMM's end.
  std::map<int, std::pair<double, double>> gemms;
  double longestGemmSpanMs() const {
    double longest = 0;
    for (const auto& [gpu, span] : gemms) longest = std::max(longest, span.second - span.first);
    return longest;
  }
};

// What the table shows, read off the sim executor's clock over the schedule.
Clock replay(const Graph& scheduled) {
  Clock clock;
  double endSeconds = replaySimClock(scheduled, [&clock](const ReplayedOp& replayed) {
    if (replayed.copy == CopyDirection::HostToDevice)
      clock.scatterMs = std::max(clock.scatterMs, replayed.end * 1e3);
    if (replayed.launch && kernelFlops(*replayed.launch) > 0) {
      auto [span, first] = clock.gemms.try_emplace(replayed.op.device().index, replayed.start * 1e3,
                                                   replayed.end * 1e3);
      span->second.second = replayed.end * 1e3;
      clock.gemmEndMs = std::max(clock.gemmEndMs, replayed.end * 1e3);
    }
  });
  clock.totalMs = endSeconds * 1e3;
  return clock;
}

// On a model small enough to run: the replay is the sim's clock, and the outputs do not
// depend on the number of GPUs.
void checkReplayAgainstTheSim() {
  std::string model = mlp(130, 64, 96, 32);
  std::map<std::string, Tensor> reference;
  for (int gpus : {1, 2, 4}) {
    std::unique_ptr<Graph> graph = compileFor(model, gpus);
    std::map<std::string, Tensor> outputs = runCheckingReplay(*graph, gpus);
    if (gpus == 1) reference = outputs;
    if (!closeTo(outputs.at("fc3"), reference.at("fc3")))
      throw std::runtime_error(fmt::format("{} GPUs give other outputs than 1", gpus));
  }
}

int benchMain(int argc, char** argv) {
  int64_t batch = argc > 1 ? std::atoll(argv[1]) : 4096;
  if (batch < 1) {
    std::fprintf(stderr, "usage: data_parallel_bench [BATCH]   (BATCH at least 1)\n");
    return 2;
  }
  checkReplayAgainstTheSim();
  std::printf(
      "MLP %lldx1024 -> 4096 -> 4096 -> 1024 (f32), --placement data-parallel, virtual "
      "H100s, simulated ms of one run\n",
      static_cast<long long>(batch));
  std::printf("%-28s %4s | %8s %9s %8s | %8s %8s %8s\n", "output", "gpus", "scatter", "GEMMs/GPU",
              "gather", "total", "speedup", "target");
  for (bool loss : {false, true}) {
    std::string model = mlp(batch, 1024, 4096, 1024, loss);
    std::string output =
        loss ? "mse_loss (one number)" : fmt::format("fc3 ({}x1024 to the host)", batch);
    Clock base;
    for (int gpus : {1, 2, 4}) {
      std::unique_ptr<Graph> graph = compileFor(model, gpus);
      Clock clock = replay(*graph);
      if (gpus == 1) base = clock;
      const char* target = loss ? "" : gpus == 2 ? "1.90x" : gpus == 4 ? "3.60x" : "-";
      std::printf("%-28s %4d | %8.3f %9.3f %8.3f | %8.3f %7.2fx %8s\n", output.c_str(), gpus,
                  clock.scatterMs, clock.longestGemmSpanMs(), clock.totalMs - clock.gemmEndMs,
                  clock.totalMs, base.totalMs / clock.totalMs, target);
    }
  }
  return 0;
}

}  // namespace
}  // namespace gxc

int main(int argc, char** argv) {
  return gxc::runBench("data_parallel_bench", gxc::benchMain, argc, argv);
}
