#include "tools/driver/compile_session.h"

#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <string_view>

#include <fmt/format.h>

#include "codegen/gpu_arch.h"
#include "frontend/onnx_import.h"
#include "passes/pipeline.h"
#include "runtime/param_init.h"

namespace gxc {

CompiledModel compileModel(const CompileOptions& options, CompileFor purpose, std::ostream& notes) {
  CompiledModel compiled;
  if (!options.simGpus.empty()) compiled.sim = parseSimGpusOption(options.simGpus);
  compiled.devices =
      resolveRunDevices(options.devices, compiled.sim, options.gpus ? *options.gpus : GpuProbe());
  // Before any pass: a run whose kernels its GPUs could not load is refused at once (`compile
  // --emit ptx` may build for GPUs elsewhere).
  if (purpose != CompileFor::Emit && !options.arch.empty())
    checkArchRunsOnGpus(parseGpuArch(options.arch), compiled.devices.gpus);
  // A real GPU's memory is what gxc may allocate there (usableGpuMemory), the same number
  // the cuda platform's allocators get from this Target.
  compiled.target.devices.clear();
  compiled.target.memoryKnown = true;
  for (const Device& device : compiled.devices.devices()) {
    int64_t bytes = 0;  // the host: not limited by the plan
    if (device.isCuda())
      bytes = compiled.sim.enabled() ? compiled.sim.memoryBytes
                                     : compiled.devices.gpuMemoryBytes.at(device.index);
    compiled.target.devices.push_back({device, bytes});
  }
  // GXC_ALLOW_TF32=1 puts f32 GEMMs on the tensor cores (runtime/cuda/cuda_gemm.h): plans
  // and the sim's clock price them so.
  const char* tf32 = std::getenv("GXC_ALLOW_TF32");
  compiled.target.costs.allowTf32 = tf32 && std::string_view(tf32) == "1";
  PassContext context;
  context.target = compiled.target;
  context.strict = options.strict;
  context.placement = options.placement;
  context.microbatches = options.microbatches;
  context.bucketBytes = options.bucketBytes;
  context.note = [&notes](const std::string& text) { notes << "gxc: note: " << text << "\n"; };
  context.hostFallbackNoted = compiled.devices.noGpuFound;
  if (options.explain)
    context.explain = [&notes](const std::string& line) {
      notes << "gxc: explain: " << line << "\n";
    };
  ModelOptions modelOptions;
  modelOptions.weightsPath = options.weightsPath;
  modelOptions.weightsPartial = options.weightsPartial;
  modelOptions.dims = parseDimOptions(options.dims);
  modelOptions.givenInputs = options.givenInputs;
  if (isOnnxPath(options.modelPath)) {
    ImportedOnnx imported = importOnnx(options.modelPath, modelOptions);
    for (const auto& [onnxName, gxcName] : imported.renamedOutputs)
      notes << fmt::format(
          "gxc: note: ONNX output '{}' is named '{}' here (--output writes {}.npy)\n", onnxName,
          gxcName, gxcName);
    compiled.renamedInputs = imported.renamedInputs;
    compiled.graph = std::move(imported.graph);
  } else {
    compiled.graph = loadModel(options.modelPath, modelOptions);
  }
  // One note, the only one about devices (context.hostFallbackNoted): whatever the model
  // places on cuda runs on the host too, so assign-devices need not repeat it.
  if (compiled.devices.noGpuFound)
    context.emitNote(fmt::format("no GPU found; {} the host (--devices cpu)",
                                 purpose == CompileFor::Emit ? "compiling for" : "running on"));
  // Data parallelism splits each batch across GPUs: on one device it changes nothing, which a
  // user who asked for it should know rather than believe the run is parallel.
  if (options.placement == "data-parallel" && compiled.devices.gpuIds.size() < 2)
    notes << fmt::format(
        "gxc: warning: --placement data-parallel does nothing on one device ({}): it splits "
        "each batch across GPUs (--sim-gpus N for N virtual ones)\n",
        compiled.devices.hostOnly() ? "the host" : "cuda:0");
  if (options.beforePasses) options.beforePasses(*compiled.graph);
  for (const Value* input : compiled.graph->inputs())
    if (isInteger(input->type.dtype))
      compiled.defaultInputBounds[input->name] = defaultInputBound(*compiled.graph, *input);
  PassManagerOptions passOptions = options.passes;
  if (!passOptions.irStream) passOptions.irStream = &notes;  // IR dumps and timings: stderr
  PassManager(purpose == CompileFor::Train ? trainingPipeline() : defaultPipeline(), passOptions)
      .run(*compiled.graph, context);
  return compiled;
}

namespace {

bool leftToProcessExit = false;

}  // namespace

void checkMicrobatchesOption(const std::string& placement, int microbatches) {
  if (placement != "pipeline")
    usageError(
        "--microbatches: only pipeline placement splits the batch into micro-batches "
        "(add --placement pipeline)");
  if (microbatches < 1) usageError("--microbatches {}: expected at least 1", microbatches);
}

void checkPlacementOptions(const CompileOptions& options, bool microbatchesGiven) {
  const std::string& placement = options.placement;
  if (placement != "manual" && placement != "auto" && placement != "data-parallel" &&
      placement != "pipeline")
    usageError("--placement {}: expected manual, auto, data-parallel or pipeline", placement);
  if (microbatchesGiven) checkMicrobatchesOption(placement, options.microbatches);
}

void leaveToProcessExit() { leftToProcessExit = true; }

void release(std::unique_ptr<Graph> graph) {
  if (!leftToProcessExit) return;  // `graph` is freed as it goes out of scope
  // Never destroyed: a leak checker still sees the graph reachable from here.
  static auto* kept = new std::vector<std::unique_ptr<Graph>>;
  kept->push_back(std::move(graph));
}

std::map<std::string, int64_t> parseDimOptions(const std::vector<std::string>& specs) {
  std::map<std::string, int64_t> dims;
  for (const std::string& spec : specs) {
    size_t eq = spec.find('=');
    std::string name = spec.substr(0, eq);
    if (eq == std::string::npos || !isDimName(name))
      usageError("--dim {}: expected NAME=N, NAME a symbolic dimension of the model", spec);
    std::string text = spec.substr(eq + 1);
    int64_t value = 0;
    auto [end, failed] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || failed != std::errc() || end != text.data() + text.size() || value <= 0)
      usageError("--dim {}: the size must be a positive integer, got '{}'", spec, text);
    if (!dims.emplace(name, value).second) usageError("--dim {}: '{}' is given twice", spec, name);
  }
  return dims;
}

}  // namespace gxc
