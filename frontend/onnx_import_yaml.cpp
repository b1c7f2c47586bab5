// The model file an ONNX import writes (onnx_import.h: onnxImportYaml): the keys in the order
// model-format.md shows them, a layer per line, and names that YAML would read as something
// other than a string (`0`, `1e3`, `true`) quoted.
#include <regex>

#include <yaml-cpp/emitter.h>

#include "frontend/onnx_import.h"

namespace gxc {
namespace {

// A plain scalar that YAML 1.1 or 1.2 resolves to a number, a boolean or null. Model names
// cannot begin with a sign or a point, so these are the forms left.
bool readsAsNonString(const std::string& text) {
  static const std::regex kNonString(
      "[0-9][0-9_]*|0x[0-9a-fA-F_]+|0o[0-7_]+|0b[01_]+|"
      "[0-9][0-9_]*(\\.[0-9_]*)?([eE][-+]?[0-9]+)?|"
      "y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF|"
      "null|Null|NULL");
  return std::regex_match(text, kNonString);
}

void emitName(YAML::Emitter& out, const YAML::Node& name) {
  if (readsAsNonString(name.Scalar()))
    out << YAML::DoubleQuoted << name.Scalar();
  else
    out << name;
}

void emitNames(YAML::Emitter& out, const YAML::Node& names) {
  out << YAML::Flow << YAML::BeginSeq;
  for (const YAML::Node& name : names) emitName(out, name);
  out << YAML::EndSeq;
}

// A map whose keys are names (inputs, params), its values as they are.
void emitNamedMap(YAML::Emitter& out, const YAML::Node& map) {
  out << YAML::BeginMap;
  for (const auto& entry : map) {
    out << YAML::Key;
    emitName(out, entry.first);
    out << YAML::Value << entry.second;
  }
  out << YAML::EndMap;
}

void emitLayer(YAML::Emitter& out, const YAML::Node& layer) {
  out << YAML::Flow << YAML::BeginMap;
  for (const auto& entry : layer) {
    const std::string key = entry.first.Scalar();
    out << YAML::Key << key << YAML::Value;
    if (key == "name")
      emitName(out, entry.second);
    else if (key == "inputs" || key == "outputs")
      emitNames(out, entry.second);
    else
      out << entry.second;
  }
  out << YAML::EndMap;
}

}  // namespace

std::string onnxImportYaml(const ImportedOnnx& imported, const std::string& weightsFile) {
  const YAML::Node& model = imported.model;
  YAML::Emitter out;
  out.SetDoublePrecision(17);
  out.SetFloatPrecision(9);
  out << YAML::BeginMap;
  out << YAML::Key << "gxc" << YAML::Value << model["gxc"];
  out << YAML::Key << "name" << YAML::Value;
  emitName(out, model["name"]);
  if (!weightsFile.empty() && model["params"])
    out << YAML::Key << "weights" << YAML::Value << weightsFile;
  if (model["dims"]) out << YAML::Key << "dims" << YAML::Value << model["dims"];
  for (const char* key : {"inputs", "params"})
    if (model[key]) {
      out << YAML::Key << key << YAML::Value;
      emitNamedMap(out, model[key]);
    }
  out << YAML::Key << "layers" << YAML::Value << YAML::BeginSeq;
  for (const YAML::Node& layer : model["layers"]) emitLayer(out, layer);
  out << YAML::EndSeq;
  out << YAML::Key << "outputs" << YAML::Value;
  emitNames(out, model["outputs"]);
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace gxc
