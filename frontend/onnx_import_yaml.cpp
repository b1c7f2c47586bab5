// The model file an ONNX import writes (onnx_import.h: onnxImportYaml): the keys in the order
// model-format.md shows them, a layer per line.
#include <yaml-cpp/emitter.h>

#include "frontend/onnx_import.h"

namespace gxc {

std::string onnxImportYaml(const ImportedOnnx& imported, const std::string& weightsFile) {
  const YAML::Node& model = imported.model;
  YAML::Node ordered(YAML::NodeType::Map);
  ordered["gxc"] = model["gxc"];
  ordered["name"] = model["name"];
  if (!weightsFile.empty() && model["params"]) ordered["weights"] = weightsFile;
  for (const char* key : {"dims", "inputs", "params", "layers", "outputs"})
    if (model[key]) ordered[key] = model[key];
  YAML::Emitter out;
  out.SetDoublePrecision(17);
  out.SetFloatPrecision(9);
  out << ordered;
  return std::string(out.c_str()) + "\n";
}

}  // namespace gxc
