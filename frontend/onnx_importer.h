// Internal to the ONNX importer: the state of importing one model (onnx_import.cpp), which
// the node translators (onnx_node.cpp, onnx_ops_*.cpp) add to.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "frontend/model_builder.h"
#include "frontend/onnx_file.h"
#include "frontend/onnx_import.h"
#include "frontend/onnx_node.h"

namespace gxc {

// A value known at import: its elements, and whether they depend on a dynamic axis (then
// they hold this binding's numbers).
struct OnnxConstant {
  Tensor tensor;
  bool fromDynamicAxes = false;
};

// A GELU the exporter wrote out as arithmetic (onnx_gelu.cpp): its nodes (ordered positions,
// the first first), the root among them, x, and the form.
struct OnnxGelu {
  std::vector<size_t> members;
  size_t root = 0;
  std::string x;
  bool tanh = false;
  size_t constantRank = 0;  // the largest rank of its constants, which broadcast against x
};

// Where a layer of the import came from: the ONNX node's location and op type.
struct OnnxLayerOrigin {
  SourceLoc loc;
  std::string onnxOp;
};

class OnnxImporter {
 public:
  // `placeholderRound` (0 or 1) picks the sizes an import (`forImport`) gives the dynamic
  // axes: the two rounds share no size, so that comparing their imports shows which numbers
  // depend on the axes (onnx_dynamic_axes.cpp).
  OnnxImporter(const std::string& path, const ModelOptions& options, bool forImport,
               int placeholderRound = 0);
  ImportedOnnx run();

  // After run(): each layer's origin, in the order of the model's `layers`, and the size each
  // dynamic axis had in this import (none when `--dim` fixed them all).
  const std::vector<OnnxLayerOrigin>& layerOrigins() const { return layerOrigins_; }
  const std::map<std::string, int64_t>& placeholders() const { return placeholderSizes_; }
  // Where each param was first read (the node whose constant input it holds).
  const std::map<std::string, SourceLoc>& paramLocs() const { return paramLocs_; }

 private:
  friend class OnnxNode;

  void orderNodes();
  void refuseUnsupportedOps() const;
  void declareInputs(YAML::Node& inputs);
  void translate(const onnx::NodeProto& proto, int index);
  void declareOutputs();
  // GELUs written out as arithmetic (onnx_gelu.cpp): found before any node is translated, each
  // emitted as one `gelu` layer at its first node (emitGelu: false, leaving its nodes to their
  // translators, where x turns out not to be a computed float tensor).
  void findGelus();
  std::optional<OnnxGelu> geluRootedAt(size_t root, const std::string& forcedLeaf,
                                       std::vector<std::string>* readTwice);
  std::optional<double> importScalar(const std::string& name, size_t& rank);
  bool emitGelu(size_t first);

  // A valid gxc name, not yet used, made from an ONNX name.
  std::string uniqueName(const std::string& onnxName);
  // The param holding a constant (declared once per ONNX value).
  std::string paramFor(const std::string& onnxName, const OnnxConstant& constant,
                       const SourceLoc& at);
  std::optional<std::string> computeInGraph(const std::string& onnxName);
  void addLayer(const YAML::Node& layer, const SourceLoc& at, const std::string& onnxOp);

  OnnxModel model_;
  ModelOptions options_;
  bool forImport_;
  std::unique_ptr<ModelBuilder> builder_;
  std::shared_ptr<SafetensorsFile> weights_;
  YAML::Node root_, params_, layers_;
  std::vector<const onnx::NodeProto*> order_;             // nodes, producers first
  std::vector<int> indexOf_;                              // each ordered node's index in the file
  std::unordered_map<std::string, std::string> gxcName_;  // ONNX value -> gxc value
  std::unordered_map<std::string, OnnxConstant> constants_;
  std::unordered_map<std::string, const onnx::TensorProto*> initializers_;
  std::set<std::string> usedNames_;
  std::map<std::string, GivenInput> givenOnnxInputs_;      // the run's input files, by ONNX name
  std::unordered_map<std::string, Tensor> settingInputs_;  // those read as settings
  std::set<std::string> graphOutputs_;
  std::unordered_map<std::string, size_t> producerOf_;  // ONNX value -> ordered position
  std::unordered_map<std::string, std::vector<size_t>> readersOf_;
  std::map<size_t, OnnxGelu> gelus_;  // by their first node's position
  std::vector<bool> absorbed_;        // nodes a GELU's layer computes
  bool hasDynamicAxes_ = false;
  int placeholderRound_ = 0;
  std::map<std::string, int64_t> placeholderSizes_;
  std::vector<OnnxLayerOrigin> layerOrigins_;
  std::map<std::string, SourceLoc> paramLocs_;
  ImportedOnnx result_;
};

// `gxc import` of a model with dynamic axes (onnx_dynamic_axes.cpp): imported twice, at two
// sets of placeholder sizes; a reshape entry that differs is written with the axes' names,
// any other number that differs is refused, naming its node.
ImportedOnnx importKeepingAxesDynamic(const std::string& path, const ModelOptions& options);

}  // namespace gxc
