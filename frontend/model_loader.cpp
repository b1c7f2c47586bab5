#include "frontend/model_loader.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "frontend/model_builder.h"

namespace gxc {

ModelBuilder::ModelBuilder(const std::string& fileName, const std::string& baseDir,
                           const std::string& weightsOverride)
    : reader_(fileName), baseDir_(baseDir), weightsOverride_(weightsOverride) {}

void ModelBuilder::define(const std::string& name, const YAML::Node& node) {
  auto previous = definedAt_.find(name);
  if (previous != definedAt_.end())
    reader_.fail(node, "duplicate name '{}': already defined at line {}", name,
                 previous->second.line);
  definedAt_[name] = reader_.loc(node);
}

std::unique_ptr<Graph> ModelBuilder::build(const YAML::Node& root) {
  if (!root.IsDefined() || root.IsNull()) modelError({reader_.file(), 1, 1}, "the model file is empty");
  reader_.requireMap(root, "a model file");
  reader_.checkKeys(root, {"gxc", "name", "seed", "weights", "default_device", "inputs", "params",
                           "layers", "outputs"},
                    "the model");
  YAML::Node version = reader_.required(root, "gxc", "a model file");
  if (reader_.scalar(version, "the format version") != "1")
    reader_.fail(version, "unsupported format version '{}' (this gxc reads version 1)",
                 version.Scalar());
  graph_ = std::make_unique<Graph>(reader_.name(reader_.required(root, "name", "the model"),
                                                "the model name"));
  if (root["seed"]) {
    seed_ = reader_.integer(root["seed"], "seed");
    if (seed_ < 0) reader_.fail(root["seed"], "seed must not be negative, got {}", seed_);
  }
  graph_->attrs().set("seed", seed_);
  if (root["default_device"]) defaultDevice_ = device(root["default_device"], "default_device");
  openWeights(root);

  YAML::Node layers = reader_.required(root, "layers", "the model");
  reader_.requireSequence(layers, "layers");
  collectLayerNames(layers);
  readInputs(reader_.required(root, "inputs", "the model"));
  if (root["params"]) readParams(root["params"]);
  readLayers(layers, std::nullopt);

  YAML::Node outputs = reader_.required(root, "outputs", "the model");
  reader_.requireSequence(outputs, "outputs");
  if (outputs.size() == 0) reader_.fail(outputs, "outputs must name at least one layer");
  std::set<std::string> seen;
  for (const YAML::Node& output : outputs) {
    std::string name = reader_.name(output, "an output");
    Value* value = graph_->find(name);
    if (!value) reader_.fail(output, "output '{}' is not a layer or input of the model", name);
    if (paramNames_.count(name))
      reader_.fail(output, "output '{}' is a param; outputs are layers or inputs", name);
    if (!seen.insert(name).second) reader_.fail(output, "output '{}' is listed twice", name);
    graph_->addOutput(name, value);
  }
  checkWeightsAllUsed(root);
  return std::move(graph_);
}

std::unique_ptr<Graph> loadModelFromString(const std::string& text, const std::string& fileName,
                                           const std::string& baseDir,
                                           const ModelOptions& options) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    modelError({fileName, e.mark.line + 1, e.mark.column + 1}, "invalid YAML: {}", e.msg);
  }
  return ModelBuilder(fileName, baseDir, options.weightsPath).build(root);
}

std::unique_ptr<Graph> loadModel(const std::string& path, const ModelOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in || std::filesystem::is_directory(path))
    throw Error(ErrorKind::Model, {path, 0, 0}, "cannot open model file");
  std::stringstream text;
  text << in.rdbuf();
  std::string baseDir = std::filesystem::path(path).parent_path().string();
  return loadModelFromString(text.str(), path, baseDir, options);
}

}  // namespace gxc
