// Internal to the frontend: the state of lowering one model file, shared by the files that
// read its parts (model_loader.cpp: the top level; tensor_spec.cpp: inputs, params, inits,
// devices; layer_builder.cpp: layers and groups; layer_slices.cpp, layer_results.cpp and
// layer_matmul.cpp: the layers that become other ops).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>

#include "frontend/model_loader.h"
#include "frontend/symbolic_dims.h"
#include "frontend/yaml_document.h"
#include "frontend/yaml_util.h"
#include "ir/graph.h"
#include "tensor/safetensors.h"

namespace gxc {

// The key of a loss layer that names a param it reads (a class weight), if it has one.
const char* weightKey(OpKind kind);

class ModelBuilder {
 public:
  ModelBuilder(const std::string& fileName, const std::string& baseDir,
               const ModelOptions& options);
  std::unique_ptr<Graph> build(const YamlNode& root);

  // The parts of build(), for a model assembled a layer at a time (the ONNX importer, which
  // needs the types of what it has lowered to lower what follows): the top level but its
  // layers and outputs; then layers, and params declared as they are needed, each located at
  // `at` (nodes made in memory have no position in a file); then the outputs.
  // These take yaml-cpp's nodes, as the importer builds them.
  void beginModel(const YAML::Node& root, const SourceLoc& at);
  void addLayer(const YAML::Node& layer, const SourceLoc& at);
  void addParamSpec(const std::string& name, const YAML::Node& spec, const SourceLoc& at);
  const Value* find(const std::string& name) const { return graph_->find(name); }
  std::unique_ptr<Graph> finishModel(const YAML::Node& root);

 private:
  // tensor_spec.cpp
  Device device(const YamlNode& node, std::string_view what) const;
  // An input's spec fills `declared` (its dims may be names; the returned shape is empty);
  // a param's (`declared` null) has sizes only.
  TensorType tensorSpec(const YamlNode& spec, std::string_view what, YamlNode* initOut,
                        DeclaredInput* declared) const;
  void readDimDefaults(const YamlNode& dims);
  Attrs initAttrs(const YamlNode& init, std::string_view what) const;
  void readInputs(const YamlNode& inputs);
  void readParams(const YamlNode& params);
  void readParam(const YamlNode& key, const YamlNode& spec);
  void readTopLevel(const YamlNode& root);
  void readOutputs(const YamlNode& root);
  // train_section.cpp
  void readTrainSection(const YamlNode& train);
  void readOptimizer(const YamlNode& spec);
  void readClipGradNorm(const YamlNode& spec);
  // train_schedule.cpp
  void readSchedule(const YamlNode& spec);
  void readSchedulePart(const std::string& kind, const YamlNode& key, const YamlNode& options,
                        int index);
  void openWeights(const YamlNode& root);
  // Every param not declared with an init of its own is in the weights file (unless
  // --weights-partial), and every tensor of the file is a param's.
  void checkWeightsMatchParams(const YamlNode& root) const;
  // Adds a param op; `init` is used when the weights file lacks `name` (or there is none):
  // an init written on the param in the model (`initWritten`) may stand in for the file's
  // tensor; a layer's default init only with --weights-partial.
  Value* addParam(const std::string& name, TensorType type, std::optional<Attrs> init,
                  const SourceLoc& loc, bool initWritten = false);

  // layer_builder.cpp
  void readLayers(const YamlNode& layers, std::optional<Device> scopeDevice);
  void readLayer(const YamlNode& layer, std::optional<Device> scopeDevice);
  void collectLayerNames(const YamlNode& layers);
  Value* resolveInput(const YamlNode& node, const std::string& layer);
  Attrs layerAttrs(const YamlNode& layer, OpKind kind, const std::string& name);
  std::vector<int64_t> shapeEntries(const YamlNode& list, const std::string& what) const;

  // layer_params.cpp
  std::vector<Value*> createdParams(const YamlNode& layer, OpKind kind, const std::string& name,
                                    const std::vector<Value*>& inputs, const Attrs& attrs);

  // layer_slices.cpp
  // A `slice` layer's attributes as the IR holds them (Python's bounds resolved).
  Attrs sliceAttrs(const YamlNode& layer, const std::string& name, const TensorType& x,
                   const Attrs& attrs) const;
  // A `split` or `chunk` layer as slices: each result's name (defined here) and attributes.
  std::vector<std::pair<std::string, Attrs>> multiResultSlices(const YamlNode& layer, OpKind kind,
                                                               const std::string& name,
                                                               const TensorType& x,
                                                               const Attrs& attrs);

  // layer_results.cpp
  // One result of a layer with several: its name (from `outputs:`), op and attributes.
  struct LayerResult {
    std::string name;
    OpKind kind;
    Attrs attrs;
  };
  // Whether the layer has several results: split, chunk, topk, and max with `indices: true`.
  bool hasSeveralResults(const YamlNode& layer, OpKind kind, const std::string& name) const;
  // Its results, each name defined here.
  std::vector<LayerResult> layerResults(const YamlNode& layer, OpKind kind, const std::string& name,
                                        const TensorType& x, const Attrs& attrs);

  // layer_matmul.cpp
  // Whether a matmul layer's operands are beyond what the IR's matmul takes (a 1-D operand,
  // batch dims of another rank or that broadcast otherwise): torch.matmul's full shapes.
  bool matmulIsLowered(const std::vector<Value*>& inputs) const;
  // Such a layer as views around one IR matmul; its result, named by the layer.
  Value* lowerMatmul(const YamlNode& layer, const std::string& name,
                     const std::vector<Value*>& inputs, const Attrs& attrs, const Device& place);

  void define(const std::string& name, const YamlNode& node);

  YamlReader reader_;
  std::string baseDir_;
  std::string weightsOverride_;
  std::map<std::string, int64_t> dimOverrides_;    // --dim
  std::map<std::string, GivenInput> givenInputs_;  // the run's input files
  std::map<std::string, DimDefault> dimDefaults_;  // the model's dims:
  DimBinding dims_;
  std::unique_ptr<Graph> graph_;
  int64_t seed_ = 0;
  std::optional<Device> defaultDevice_;
  std::shared_ptr<SafetensorsFile> inMemoryWeights_;
  std::shared_ptr<SafetensorsFile> weights_;
  bool weightsPartial_ = false;
  std::set<std::string> loadedFromWeights_;
  std::vector<std::string> missingFromWeights_;     // made from a layer's default init instead
  std::unordered_map<std::string, int> definedAt_;  // line of every name defined so far
  // The file's `layers:` while build() reads it (undefined for a model built a layer at a
  // time), and the line of every layer name in it, collected only to say that an unknown
  // input is defined later.
  YamlNode fileLayers_;
  std::unordered_map<std::string, int> layerNamesAhead_;
  // Device follows data (format 1.1): the results of `to` layers, and of layers that took
  // their device from one, with that device; a layer with no device of its own or of its
  // group that reads one of them runs there.
  std::unordered_map<const Value*, Device> movedData_;
  // The layers with several results read so far, with the names of their results.
  std::unordered_map<std::string, std::vector<std::string>> multiResultLayers_;
};

}  // namespace gxc
