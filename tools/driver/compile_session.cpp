#include "tools/driver/compile_session.h"

#include <cstdlib>
#include <string_view>

#include "passes/pipeline.h"

namespace gxc {

CompiledModel compileModel(const CompileOptions& options, std::ostream& notes) {
  CompiledModel compiled;
  if (!options.simGpus.empty()) compiled.sim = parseSimGpusOption(options.simGpus);
  compiled.devices = resolveRunDevices(options.devices, compiled.sim, notes);
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
  context.note = [&notes](const std::string& text) { notes << "gxc: note: " << text << "\n"; };
  if (options.explain)
    context.explain = [&notes](const std::string& line) {
      notes << "gxc: explain: " << line << "\n";
    };
  ModelOptions modelOptions;
  modelOptions.weightsPath = options.weightsPath;
  compiled.graph = loadModel(options.modelPath, modelOptions);
  PassManagerOptions passOptions = options.passes;
  if (!passOptions.irStream) passOptions.irStream = &notes;  // IR dumps and timings: stderr
  PassManager manager(passOptions);
  for (const std::string& pass : defaultPipeline()) manager.add(pass);
  manager.run(*compiled.graph, context);
  return compiled;
}

}  // namespace gxc
