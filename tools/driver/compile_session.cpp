#include "tools/driver/compile_session.h"

#include "passes/pipeline.h"

namespace gxc {

std::vector<Device> parseDeviceList(const std::string& text, std::ostream& notes) {
  if (text.empty()) {
    // No GPU platform is built yet, so "every GPU" is none.
    notes << "gxc: note: no GPU found; running on the host (--devices cpu)\n";
    return {Device::cpu()};
  }
  if (text == "cpu") return {Device::cpu()};
  usageError(
      "--devices {}: this gxc runs on the host only (--devices cpu); GPU and virtual-GPU "
      "platforms are not built yet",
      text);
}

CompiledModel compileModel(const CompileOptions& options, std::ostream& notes) {
  CompiledModel compiled;
  compiled.context.devices = parseDeviceList(options.devices, notes);
  compiled.context.strict = options.strict;
  compiled.context.note = [&notes](const std::string& text) {
    notes << "gxc: note: " << text << "\n";
  };
  ModelOptions modelOptions;
  modelOptions.weightsPath = options.weightsPath;
  compiled.graph = loadModel(options.modelPath, modelOptions);
  PassManagerOptions passOptions = options.passes;
  if (!passOptions.irStream) passOptions.irStream = &notes;  // IR dumps and timings: stderr
  PassManager manager(passOptions);
  for (const std::string& pass : defaultPipeline()) manager.add(pass);
  manager.run(*compiled.graph, compiled.context);
  compiled.context.note = nullptr;  // it refers to `notes`, which the caller owns
  return compiled;
}

}  // namespace gxc
