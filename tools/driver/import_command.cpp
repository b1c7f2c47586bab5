#include "tools/driver/import_command.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "frontend/onnx_import.h"
#include "tools/driver/compile_session.h"

namespace gxc {

int importCommand(const ImportOptions& options, std::ostream& out, std::ostream& err) {
  namespace fs = std::filesystem;
  if (!isOnnxPath(options.modelPath))
    usageError("import: {} is not an ONNX model (.onnx); gxc YAML models need no import",
               options.modelPath);
  fs::path yamlPath(options.outPath);
  if (yamlPath.extension() != ".yaml" && yamlPath.extension() != ".yml")
    usageError(
        "import: -o {}: expected a .yaml file name (the weights go beside it, as .safetensors)",
        options.outPath);
  ModelOptions modelOptions;
  modelOptions.dims = parseDimOptions(options.dims);
  ImportedOnnx imported = importOnnx(options.modelPath, modelOptions, /*forImport=*/true);
  std::error_code made;
  if (yamlPath.has_parent_path()) fs::create_directories(yamlPath.parent_path(), made);
  fs::path weightsPath = yamlPath;
  weightsPath.replace_extension(".safetensors");
  bool hasWeights = !imported.weights->entries().empty();
  std::string text = onnxImportYaml(imported, hasWeights ? weightsPath.filename().string() : "");
  // The weights first, then the model through a temporary file, so that a failure leaves
  // neither half-written.
  if (hasWeights) {
    std::map<std::string, Tensor> tensors;
    for (const auto& [name, entry] : imported.weights->entries())
      tensors[name] = imported.weights->read(name);
    writeSafetensors(weightsPath.string(), tensors);
  }
  std::string staged = yamlPath.string() + ".partial";
  {
    std::ofstream file(staged, std::ios::binary);
    file << text;
    file.close();
    if (!file) {
      std::remove(staged.c_str());
      if (hasWeights) std::remove(weightsPath.string().c_str());
      runtimeError(SourceLoc{yamlPath.string(), 0, 0}, "cannot write the model file");
    }
  }
  std::error_code ec;
  fs::rename(staged, yamlPath, ec);
  if (ec) {
    std::remove(staged.c_str());
    if (hasWeights) std::remove(weightsPath.string().c_str());
    runtimeError(SourceLoc{yamlPath.string(), 0, 0}, "cannot write the model file: {}",
                 ec.message());
  }
  out << fmt::format("gxc: imported {} as {} ({} layers{})\n", options.modelPath, yamlPath.string(),
                     imported.model["layers"].size(),
                     hasWeights
                         ? fmt::format(", {} params in {}", imported.weights->entries().size(),
                                       weightsPath.string())
                         : std::string());
  for (const auto& [onnxName, gxcName] : imported.renamedInputs)
    err << fmt::format("gxc: note: ONNX input '{}' is named '{}'\n", onnxName, gxcName);
  for (const auto& [onnxName, gxcName] : imported.renamedOutputs)
    err << fmt::format("gxc: note: ONNX output '{}' is named '{}'\n", onnxName, gxcName);
  for (const auto& [onnxName, gxcName] : imported.renamedParams)
    err << fmt::format("gxc: note: ONNX initializer '{}' is named '{}'\n", onnxName, gxcName);
  return 0;
}

}  // namespace gxc
