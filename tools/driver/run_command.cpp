#include "tools/driver/run_command.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "ir/progress.h"
#include "runtime/cuda/cuda_platform.h"
#include "runtime/host/host_executor.h"
#include "runtime/host/host_threads.h"
#include "runtime/param_init.h"
#include "runtime/sim/sim_executor.h"
#include "tensor/npy.h"
#include "tools/driver/gpu_code.h"
#include "tools/driver/host_estimate.h"
#include "tools/driver/output_paths.h"
#include "tools/driver/run_summary.h"
#include "tools/driver/staged_files.h"
#include "tools/driver/tensor_format.h"

namespace gxc {
namespace {

// What a .npy file holds after its header: the tensor's bytes as they lie in memory.
std::string_view tensorBytes(const Tensor& tensor) {
  return {reinterpret_cast<const char*>(tensor.data()), tensor.nbytes()};
}

// An --input file, read once: for its shape when the model's symbolic dimensions need it
// (frontend/symbolic_dims.h), else when the inputs are bound, as the input's dtype (so that a
// file of a dtype gxc lacks is told the astype to that one).
struct InputFile {
  std::string path;
  std::optional<Tensor> tensor;
  Tensor& read(std::optional<DType> expected = std::nullopt) {
    if (!tensor) tensor = expected ? readNpy(path, *expected) : readNpy(path);
    return *tensor;
  }
};

std::map<std::string, InputFile> parseInputOptions(const std::vector<std::string>& specs) {
  std::map<std::string, InputFile> files;
  for (const std::string& spec : specs) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      usageError("--input {}: expected NAME=FILE.npy", spec);
    std::string name = spec.substr(0, eq);
    if (files.count(name)) usageError("--input {}: input '{}' is given twice", spec, name);
    files[name] = {spec.substr(eq + 1), std::nullopt};
  }
  return files;
}

// Unknown input names were refused when the model was loaded (ModelOptions::givenInputs).
std::map<std::string, Tensor> bindInputs(const CompiledModel& compiled,
                                         std::map<std::string, InputFile>& files) {
  const Graph& graph = *compiled.graph;
  std::map<std::string, Tensor> tensors;
  int64_t seed = graph.attrs().getInt("seed", 0);
  for (const Value* input : graph.inputs()) {
    auto file = files.find(input->name);
    if (file == files.end()) {
      auto bound = compiled.defaultInputBounds.find(input->name);
      tensors[input->name] = defaultInput(
          *input, seed, bound == compiled.defaultInputBounds.end() ? 0 : bound->second);
      continue;
    }
    Tensor& tensor = file->second.read(input->type.dtype);
    // Read again as the model's dtype: for the file's own message on a dtype it does not
    // match (a float64 file says how to save it as float32).
    if (tensor.dtype() != input->type.dtype) tensor = readNpy(file->second.path, input->type.dtype);
    checkGivenInput(*input, input->name, tensor.dtype(), tensor.shape(), {file->second.path, 0, 0});
    tensors[input->name] = std::move(tensor);
  }
  return tensors;
}

// The --iterations loop, counted on screen: `while (timed.more())` runs the body N times.
class TimedIterations {
 public:
  explicit TimedIterations(int iterations) : left_(iterations) {
    if (iterations > 0) task_.emplace("timed iterations", iterations);
  }
  bool more() {
    if (started_ && task_) task_->advance();
    started_ = true;
    return left_-- > 0;
  }

 private:
  int left_;
  bool started_ = false;
  std::optional<ProgressTask> task_;
};

struct PlatformRun {
  std::map<std::string, Tensor> outputs;
  RunSummary summary;
  std::string trace;  // Chrome trace JSON, where the platform records one
};

// The `cpu` platform: the host executor, wall-clock times.
PlatformRun runOnHost(const Graph& graph, const std::map<std::string, Tensor>& inputs,
                      int iterations, HostLaunchMode launch) {
  HostExecutor executor(graph, launch);
  HostRunStats stats;
  PlatformRun run;
  {
    // Long work is announced with the cost model's estimate, and its time counted on screen.
    std::optional<std::string> announcement = hostRunAnnouncement(estimateHostRun(graph));
    if (announcement) announceProgress("gxc: " + *announcement);
    ProgressTask running("running on the host", 0);
    run.outputs = executor.run(inputs, &stats);
  }
  for (TimedIterations timed(iterations); timed.more();) {  // the run above was the warm-up
    run.outputs = executor.run(inputs, &stats);
    run.summary.iterationMs.push_back(stats.milliseconds);
  }
  std::vector<double> iterationMs = std::move(run.summary.iterationMs);
  run.summary = hostRunSummary(stats, executor);
  run.summary.iterationMs = std::move(iterationMs);
  return run;
}

// The `sim` platform: virtual GPUs, simulated times, a trace of every stream.
PlatformRun runOnSim(const CompiledModel& compiled, const std::map<std::string, Tensor>& inputs,
                     int iterations, HostLaunchMode launch) {
  SimConfig config = simConfigOf(compiled);
  config.launch = launch;
  SimExecutor executor(*compiled.graph, config);
  SimRunReport report;
  PlatformRun run;
  run.outputs = executor.run(inputs, &report);
  for (TimedIterations timed(iterations); timed.more();) {
    run.outputs = executor.run(inputs, &report);
    run.summary.iterationMs.push_back(report.totalMs);
  }
  std::vector<double> iterationMs = std::move(run.summary.iterationMs);
  run.summary = simRunSummary(report, config, executor);
  run.summary.iterationMs = std::move(iterationMs);
  run.trace = report.trace.str();
  return run;
}

// The `cuda` platform: real GPUs, wall-clock and CUDA-event times.
PlatformRun runOnCuda(const CompiledModel& compiled, const std::map<std::string, Tensor>& inputs,
                      const std::optional<GpuArch>& arch, int iterations, std::ostream& notes) {
  CudaRunOptions options = cudaRunOptionsOf(compiled, notes);
  options.arch = arch;
  options.iterations = iterations;
  CudaPlatformRun cuda = runOnCudaPlatform(*compiled.graph, inputs, options);
  PlatformRun run;
  run.outputs = std::move(cuda.outputs);
  run.summary = cudaRunSummary(cuda.report, compiled, cuda.kernelCache);
  run.summary.iterationMs = cuda.iterationMs;
  return run;
}

}  // namespace

void checkGivenInput(const Value& input, const std::string& given, DType dtype, const Shape& shape,
                     const SourceLoc& at) {
  if (dtype != input.type.dtype || shape != input.type.shape)
    throw Error(
        ErrorKind::Model, at,
        fmt::format("input '{}' is {}{} but the model declares {} ({})", given, dtypeName(dtype),
                    shapeString(shape), input.type.withoutDevice(), input.loc.where()));
}

CudaRunOptions cudaRunOptionsOf(const CompiledModel& compiled, std::ostream& notes) {
  CudaRunOptions options;
  options.note = [&notes](const std::string& text) { notes << "gxc: note: " << text << "\n"; };
  options.deviceMap = compiled.devices.gpuIds;
  for (size_t i = 0; i < compiled.devices.gpuIds.size(); ++i)
    options.memoryBytes.push_back(
        compiled.target.memoryOf(Device::cuda(static_cast<int>(i))));  // as plan-memory had it
  return options;
}

RunSummary cudaRunSummary(const CudaRunReport& report, const CompiledModel& compiled,
                          const KernelCacheStats& kernels) {
  RunSummary summary;
  size_t gpus = compiled.devices.gpuIds.size();
  summary.platform = fmt::format("{} GPU{}", gpus, gpus == 1 ? "" : "s");
  summary.clock = "wall";
  summary.totalMs = report.totalMs;
  for (const CudaDeviceReport& device : report.devices) {
    std::string backing = device.gpu < 0 ? "host" : fmt::format("GPU {}", device.gpu);
    summary.devices.push_back({device.device, backing, device.ms, device.memory.peakAllocatedBytes,
                               device.memory.peakReservedBytes, device.bytesCopiedIn,
                               device.bytesCopiedOut, device.copiesIn, device.copiesOut});
  }
  summary.kernelsCompiled = kernels.compiles;
  summary.kernelCacheHits = kernels.hits;
  return summary;
}

RunSummary hostRunSummary(const HostRunStats& stats, const HostExecutor& executor) {
  RunSummary summary;
  summary.platform = "cpu";
  summary.clock = "wall";
  summary.totalMs = stats.milliseconds;
  // One device and no copies; the columns stay so reports keep one shape on every platform.
  summary.devices.push_back(
      {"cpu", "host", stats.milliseconds, stats.peakBytes, stats.peakBytes, 0, 0, 0, 0});
  summary.kernelsCompiled = executor.kernelCacheStats().compiles;
  summary.kernelCacheHits = executor.kernelCacheStats().hits;
  return summary;
}

RunSummary simRunSummary(const SimRunReport& report, const SimConfig& config,
                         const SimExecutor& executor) {
  RunSummary summary;
  summary.platform = fmt::format("{} virtual GPU{}", config.gpus, config.gpus == 1 ? "" : "s");
  summary.clock = "simulated";
  summary.totalMs = report.totalMs;
  for (const SimDeviceReport& device : report.devices) {
    std::string backing =
        device.virtualGpu < 0 ? "host" : fmt::format("sim GPU {}", device.virtualGpu);
    summary.devices.push_back({device.device, backing, device.busyMs,
                               device.memory.peakAllocatedBytes, device.memory.peakReservedBytes,
                               device.bytesCopiedIn, device.bytesCopiedOut, device.copiesIn,
                               device.copiesOut});
  }
  summary.kernelsCompiled = executor.kernelCacheStats().compiles;
  summary.kernelCacheHits = executor.kernelCacheStats().hits;
  return summary;
}

SimConfig simConfigOf(const CompiledModel& compiled) {
  SimConfig config;
  config.gpus = compiled.sim.count;
  config.memoryPerGpu = compiled.sim.memoryBytes;
  config.deviceMap = compiled.devices.gpuIds;
  config.launchBlocking = launchBlockingFromEnvironment();
  config.costs = compiled.target.costs;
  return config;
}

int runModel(const RunOptions& options, std::ostream& out, std::ostream& err) {
  std::optional<GpuArch> arch = parseArchOption(options.compile.arch);
  // Every path written after the run, checked before it: a mistake there costs no run.
  if (!options.outputDir.empty())
    checkOutputDirOption("--output", options.outputDir,
                         " (--output DIR writes every output as DIR/NAME.npy)");
  if (!options.reportPath.empty()) checkOutputFileOption("--report", options.reportPath);
  if (!options.tracePath.empty()) checkOutputFileOption("--trace", options.tracePath);
  std::map<std::string, InputFile> files = parseInputOptions(options.inputs);
  CompileOptions compileOptions = options.compile;
  for (auto& [name, file] : files)
    compileOptions.givenInputs[name] = {
        file.path, [&file] { return file.read().shape(); }, false, {}};
  CompiledModel compiled = compileModel(compileOptions, CompileFor::Run, err);
  for (const auto& [onnxName, gxcName] : compiled.renamedInputs) {
    auto file = files.find(onnxName);
    if (file == files.end()) continue;
    files[gxcName] = std::move(file->second);
    files.erase(onnxName);
  }
  const Graph& graph = *compiled.graph;
  bool realGpus = !compiled.devices.hostOnly() && !compiled.sim.enabled();
  if (arch && !realGpus)
    usageError("--arch {}: only runs on real GPUs compile GPU code, and this run has none",
               options.compile.arch);
  if (!options.tracePath.empty() && compiled.devices.hostOnly())
    usageError("--trace: the host platform records no trace; run on GPUs (--sim-gpus N)");
  if (!options.tracePath.empty() && realGpus)
    usageError("--trace: real GPUs record no trace yet; --sim-gpus N traces the same plan");
  if (options.emulateGpuBlocks && realGpus)
    usageError(
        "--emulate-gpu-blocks: real GPUs run their blocks themselves; it emulates them "
        "on --devices cpu and --sim-gpus N");
  HostLaunchMode launch;
  launch.emulateBlocks = options.emulateGpuBlocks;
  std::map<std::string, Tensor> inputs = bindInputs(compiled, files);
  PlatformRun run;
  OnFirstOpenMpCore master;
  if (compiled.devices.hostOnly())
    run = runOnHost(graph, inputs, options.iterations, launch);
  else if (realGpus)
    run = runOnCuda(compiled, inputs, arch, options.iterations, err);
  else
    run = runOnSim(compiled, inputs, options.iterations, launch);

  StagedFiles staged;
  if (!options.outputDir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(options.outputDir, ec);
    if (ec) runtimeError({}, "--output {}: {}", options.outputDir, ec.message());
    for (const auto& [name, tensor] : run.outputs) {
      std::string path = (std::filesystem::path(options.outputDir) / (name + ".npy")).string();
      staged.stage(path, {npyHeader(tensor), tensorBytes(tensor)}, "--output");
    }
  }
  if (!options.reportPath.empty()) {
    nlohmann::json report = summaryJson(run.summary);
    report["model"] = options.compile.modelPath;
    report["graph"] = graph.name();
    for (const auto& [name, tensor] : run.outputs)
      report["outputs"][name] = {{"dtype", dtypeName(tensor.dtype())}, {"shape", tensor.shape()}};
    staged.stage(options.reportPath, {report.dump(2) + "\n"}, "--report");
  }
  if (!options.tracePath.empty()) staged.stage(options.tracePath, {run.trace}, "--trace");
  staged.commit();

  for (const GraphOutput& output : graph.outputs()) {
    const Tensor& tensor = run.outputs.at(output.name);
    out << output.name << ": " << dtypeName(tensor.dtype()) << shapeString(tensor.shape()) << "\n"
        << formatTensor(tensor) << "\n";
  }
  printSummary(options.compile.modelPath, run.summary, err);
  return 0;
}

}  // namespace gxc
