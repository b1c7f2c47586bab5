// Pipeline on virtual H100s: a VeryBigModule-shaped model, two large GEMMs in a row (x @ W1
// then @ W2, BATCH x 1024 -> 16384 -> 1024, f32, 64 MiB per weight, batch 4096 by default),
// compiled by the default pipeline with --placement pipeline on 2 GPUs for M = 1, 2, 4, 8
// micro-batches, against the same model on one GPU. The figure is the simulated time of one
// run (the sim cost model's clock, SimRunReport::totalMs) and the speedup, next to GPipe's
// bound for two stages, 2M / (M + 1): M + 1 stage-times of work where one device takes 2M.
//
// The sim platform does the arithmetic for real on the host: 275 GFLOP per run would take
// minutes on the benchmark machine's two cores. So the bench replays the sim executor's clock
// over the compiled schedule without the arithmetic (as SimExecutor::issue computes it: an op
// starts when its stream is free and the events it waits for are recorded), and checks on a
// small model of the same shape, for every M, that the replay equals SimRunReport::totalMs
// of a real run and that the outputs equal the one-GPU run's.
//
// Besides the total, each row shows where the time goes: the input's first micro-batch on
// cuda:0 (PCIe), the span of the GEMMs (the first one's start to the last one's end, both
// stages), and the tail after the last GEMM (the output's micro-batches gathered on cuda:1
// and copied to the host over PCIe).
//
// Usage: pipeline_bench [BATCH]   (default 4096)
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

std::string twoGemms(int64_t batch, int64_t width, int64_t hidden) {
  return fmt::format(
      "gxc: 1\n"
      "name: two_gemms\n"
      "inputs:\n"
      "  x: {{shape: [{0}, {1}]}}\n"
      "params:\n"
      "  W1: {{shape: [{1}, {2}], init: {{normal: {{std: 0.03}}}}}}\n"
      "  W2: {{shape: [{2}, {1}], init: {{normal: {{std: 0.03}}}}}}\n"
      "layers:\n"
      "  - {{name: h, op: matmul, inputs: [x, W1]}}\n"
      "  - {{name: y, op: matmul, inputs: [h, W2]}}\n"
      "outputs: [y]\n",
      batch, width, hidden);
}

// One GPU: the model as it is (manual placement). Two: --placement pipeline, M micro-batches.
std::unique_ptr<Graph> compileFor(const std::string& model, int gpus, int microbatches) {
  auto graph = loadModelFromString(model, "two_gemms.yaml", ".");
  PassContext context;
  std::vector<Device> devices;
  for (int i = 0; i < gpus; ++i) devices.push_back(Device::cuda(i));
  context.target = Target::of(devices);
  if (gpus > 1) {
    context.placement = "pipeline";
    context.microbatches = microbatches;
  }
  PassManager(defaultPipeline()).run(*graph, context);
  return graph;
}

struct Clock {
  double totalMs = 0;
  double firstInMs = 0;     // the input's first piece has reached its GPU
  double gemmStartMs = -1;  // the first GEMM starts
  double gemmEndMs = 0;     // the last GEMM ends
};

// What the table shows, read off the sim executor's clock over the schedule.
Clock replay(const Graph& scheduled) {
  Clock clock;
  double endSeconds = replaySimClock(scheduled, [&clock](const ReplayedOp& replayed) {
    if (replayed.copy == CopyDirection::HostToDevice && clock.firstInMs == 0)
      clock.firstInMs = replayed.end * 1e3;
    if (replayed.launch && kernelFlops(*replayed.launch) > 0) {
      if (clock.gemmStartMs < 0) clock.gemmStartMs = replayed.start * 1e3;
      clock.gemmEndMs = std::max(clock.gemmEndMs, replayed.end * 1e3);
    }
  });
  clock.totalMs = endSeconds * 1e3;
  return clock;
}

// On a model small enough to run: the replay is the sim's clock, and the outputs do not
// depend on the micro-batches.
void checkReplayAgainstTheSim() {
  std::string model = twoGemms(96, 32, 64);
  std::map<std::string, Tensor> reference;
  for (int microbatches : {0, 1, 2, 4, 8}) {
    int gpus = microbatches == 0 ? 1 : 2;
    std::unique_ptr<Graph> graph = compileFor(model, gpus, microbatches);
    std::map<std::string, Tensor> outputs = runCheckingReplay(*graph, gpus);
    if (gpus == 1) reference = outputs;
    if (!closeTo(outputs.at("y"), reference.at("y")))
      throw std::runtime_error(fmt::format("M = {} gives other outputs than 1 GPU", microbatches));
  }
}

int benchMain(int argc, char** argv) {
  int64_t batch = argc > 1 ? std::atoll(argv[1]) : 4096;
  if (batch < 8) {
    std::fprintf(stderr, "usage: pipeline_bench [BATCH]   (BATCH at least 8)\n");
    return 2;
  }
  checkReplayAgainstTheSim();
  std::printf(
      "two GEMMs %lldx1024 -> 16384 -> 1024 (f32), virtual H100s, simulated ms of one run\n",
      static_cast<long long>(batch));
  std::printf("%-26s | %8s %8s %8s | %8s %8s %8s %9s\n", "run", "first in", "GEMMs", "tail",
              "total", "speedup", "bound", "of bound");
  std::string model = twoGemms(batch, 1024, 16384);
  Clock base;
  for (int microbatches : {0, 1, 2, 4, 8}) {
    int gpus = microbatches == 0 ? 1 : 2;
    Clock clock = replay(*compileFor(model, gpus, microbatches));
    std::string run =
        microbatches == 0 ? "1 GPU" : fmt::format("pipeline, 2 GPUs, M = {}", microbatches);
    if (microbatches == 0) {
      base = clock;
      std::printf("%-26s | %8.3f %8.3f %8.3f | %8.3f %8s %8s %9s\n", run.c_str(), clock.firstInMs,
                  clock.gemmEndMs - clock.gemmStartMs, clock.totalMs - clock.gemmEndMs,
                  clock.totalMs, "1.00x", "-", "-");
      continue;
    }
    double speedup = base.totalMs / clock.totalMs;
    double bound = 2.0 * microbatches / (microbatches + 1);
    std::printf("%-26s | %8.3f %8.3f %8.3f | %8.3f %7.2fx %7.2fx %8.1f%%\n", run.c_str(),
                clock.firstInMs, clock.gemmEndMs - clock.gemmStartMs,
                clock.totalMs - clock.gemmEndMs, clock.totalMs, speedup, bound,
                100.0 * speedup / bound);
  }
  return 0;
}

}  // namespace
}  // namespace gxc

int main(int argc, char** argv) {
  return gxc::runBench("pipeline_bench", gxc::benchMain, argc, argv);
}
