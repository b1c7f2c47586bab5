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

class OnnxImporter {
 public:
  OnnxImporter(const std::string& path, const ModelOptions& options, bool forImport);
  ImportedOnnx run();

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
  void addLayer(const YAML::Node& layer, const SourceLoc& at);

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
  size_t placeholders_ = 0;
  ImportedOnnx result_;
};

}  // namespace gxc
