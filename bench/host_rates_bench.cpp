// The host's rates that the sim cost table's host figures come from (target/cost_table.cpp),
// measured on the machine this runs on, through gxc's own cpu platform where gxc does the work:
//   - memcpy into staging: one thread copying a large pageable buffer into the two halves of a
//     double-buffered staging buffer, chunk by chunk, as the runtimes' staging threads do
//     (runtime/sim/sim_staging.h, runtime/cuda/cuda_staging.h);
//   - memory-bound kernels: a generated `relu` over 16M floats (64 MiB read, 64 MiB written);
//   - GEMMs: an f32 matmul of 2048 x 2048 x 2048 through the host's GEMMs (oneDNN), on all
//     cores;
//   - per op: a chain of one-element ops (not fused), whose time is all dispatch.
// Each is the least of REPEATS timed runs after one warm-up, by wall time and, for the
// one-threaded ones, by CPU time too (see bestOf).
//
// Usage: host_rates_bench [REPEATS]   (default 5)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "bench/sim_clock_replay.h"
#include "frontend/model_loader.h"
#include "passes/pass_manager.h"
#include "passes/pipeline.h"
#include "runtime/host/host_executor.h"
#include "runtime/param_init.h"
#include "target/cost_model.h"

namespace gxc {
namespace {

// Wall and CPU seconds of `work`, each the least of `repeats` runs after one warm-up (page
// faults, caches, the kernel build). On a machine shared with other work, the least is the
// closest to an idle machine, and for one thread its CPU time closer still.
struct Timing {
  double wall = 0, cpu = 0;
};

double cpuSeconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

Timing bestOf(int repeats, const std::function<void()>& work) {
  work();
  Timing best{1e300, 1e300};
  for (int i = 0; i < repeats; ++i) {
    auto start = std::chrono::steady_clock::now();
    double cpuStart = cpuSeconds();
    work();
    best.cpu = std::min(best.cpu, cpuSeconds() - cpuStart);
    best.wall = std::min(
        best.wall, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

Timing stagingMemcpy(int repeats) {
  const size_t total = size_t{256} << 20;
  const size_t chunk = static_cast<size_t>(kStagingChunkBytes);
  std::vector<std::byte> source(total, std::byte{1});
  std::vector<std::byte> staging(2 * chunk, std::byte{0});
  return bestOf(repeats, [&] {
    for (size_t at = 0, i = 0; at < total; at += chunk, ++i)
      std::memcpy(staging.data() + (i % 2) * chunk, source.data() + at,
                  std::min(chunk, total - at));
  });
}

// Compiles `model` for the host with the default pipeline, or without `fuse` when `unfused`.
std::unique_ptr<Graph> compileForHost(const std::string& model, bool unfused) {
  auto graph = loadModelFromString(model, "host_rates.yaml", ".");
  PassContext context;
  context.target = Target::of({Device::cpu()});
  PassManager manager;
  for (const std::string& pass : defaultPipeline())
    if (!unfused || pass != "fuse") manager.add(pass);
  manager.run(*graph, context);
  return graph;
}

Timing runOnHost(const std::string& model, bool unfused, int repeats) {
  std::unique_ptr<Graph> graph = compileForHost(model, unfused);
  HostExecutor executor(*graph);
  std::map<std::string, Tensor> inputs;
  for (const Value* input : graph->inputs()) inputs[input->name] = defaultInput(*graph, *input, 0);
  return bestOf(repeats, [&] { executor.run(inputs); });
}

int benchMain(int argc, char** argv) {
  int repeats = argc > 1 ? std::atoi(argv[1]) : 5;
  if (repeats < 1) {
    std::fprintf(stderr, "usage: host_rates_bench [REPEATS]   (REPEATS at least 1)\n");
    return 2;
  }
  const CostTable& table = h100SxmCosts();
  const double totalMemcpy = 256.0 * (1 << 20);
  std::printf(
      "host rates, least of %d runs: by wall time, [by CPU time, for one thread]; "
      "the sim cost table's figure last\n",
      repeats);

  Timing memcpy = stagingMemcpy(repeats);
  std::printf("memcpy into staging (%lld MiB chunks): %6.2f [%6.2f] GB/s   table %.2f GB/s\n",
              static_cast<long long>(kStagingChunkBytes >> 20), totalMemcpy / memcpy.wall / 1e9,
              totalMemcpy / memcpy.cpu / 1e9, table.hostMemcpyBytesPerSecond / 1e9);

  const int64_t elements = int64_t{16} << 20;
  std::string relu = fmt::format(
      "gxc: 1\nname: relu\ninputs:\n  x: {{shape: [{}]}}\nlayers:\n"
      "  - {{name: r, op: relu, inputs: [x]}}\noutputs: [r]\n",
      elements);
  Timing reluTime = runOnHost(relu, false, repeats);
  double reluBytes = 8.0 * static_cast<double>(elements);
  std::printf("generated relu, %lld floats:       %6.2f [%6.2f] GB/s   table %.2f GB/s\n",
              static_cast<long long>(elements), reluBytes / reluTime.wall / 1e9,
              reluBytes / reluTime.cpu / 1e9, table.hostMemoryBytesPerSecond / 1e9);

  const int64_t n = 2048;
  std::string gemm = fmt::format(
      "gxc: 1\nname: gemm\ninputs:\n  a: {{shape: [{0}, {0}]}}\n  b: {{shape: [{0}, {0}]}}\n"
      "layers:\n  - {{name: c, op: matmul, inputs: [a, b]}}\noutputs: [c]\n",
      n);
  Timing gemmTime = runOnHost(gemm, false, repeats);
  double flops = 2.0 * static_cast<double>(n * n * n);
  // The GEMM runs one thread per core: its CPU time over the cores is its time when idle.
  double cores = std::max(1u, std::thread::hardware_concurrency());
  std::printf(
      "host f32 GEMM %lld^3:               %6.1f [%6.1f] GFLOP/s, %g threads   table "
      "%.1f GFLOP/s\n",
      static_cast<long long>(n), flops / gemmTime.wall / 1e9, flops / (gemmTime.cpu / cores) / 1e9,
      cores, table.hostGemmFlopsPerSecond / 1e9);

  const int ops = 4000;
  std::string chain = "gxc: 1\nname: chain\ninputs:\n  x: {shape: [1]}\nlayers:\n";
  std::string previous = "x";
  for (int i = 0; i < ops; ++i) {
    chain += fmt::format("  - {{name: l{}, op: {}, inputs: [{}]}}\n", i, i % 2 ? "relu" : "neg",
                         previous);
    previous = fmt::format("l{}", i);
  }
  chain += fmt::format("outputs: [{}]\n", previous);
  Timing chainTime = runOnHost(chain, true, repeats);
  std::printf("one-element ops, unfused:          %6.2f [%6.2f] us an op   table %.2f us\n",
              chainTime.wall / ops * 1e6, chainTime.cpu / ops * 1e6, table.hostOpSeconds * 1e6);
  return 0;
}

}  // namespace
}  // namespace gxc

int main(int argc, char** argv) {
  return gxc::runBench("host_rates_bench", gxc::benchMain, argc, argv);
}
