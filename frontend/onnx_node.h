// Internal to the ONNX importer: what the translator of one ONNX node sees and does.
//
// A translator (onnx_ops_*.cpp) reads the node's attributes and inputs, and either emits gxc
// layers, the very YAML maps a model file would hold, which the model builder lowers at once
// (so the types of what it emitted are known to the nodes after it), or, for a node whose
// result is known at import (shape arithmetic on constants), sets that result as a constant.
// Every failure is a model error located at the node: file, index and name.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>
#include <yaml-cpp/yaml.h>

#include "ir/diagnostic.h"
#include "ir/tensor_type.h"
#include "tensor/tensor.h"

namespace gxc {

class OnnxImporter;

class OnnxNode {
 public:
  OnnxNode(OnnxImporter& importer, const onnx::NodeProto& proto, int index);

  const onnx::NodeProto& proto() const { return proto_; }
  const std::string& opType() const { return proto_.op_type(); }
  int64_t opset() const;
  SourceLoc loc() const;

  // Attributes, with ONNX's defaults given by the caller.
  bool hasAttr(const char* name) const { return attr(name) != nullptr; }
  int64_t intAttr(const char* name, int64_t fallback) const;
  double floatAttr(const char* name, double fallback) const;
  std::string stringAttr(const char* name, const std::string& fallback) const;
  std::vector<int64_t> intsAttr(const char* name, std::vector<int64_t> fallback = {}) const;
  std::vector<double> floatsAttr(const char* name) const;
  std::optional<Tensor> tensorAttr(const char* name) const;
  // Fails naming every attribute set on the node that is not in `known`: an attribute gxc
  // would ignore must not change the answer silently.
  void checkAttrs(std::initializer_list<const char*> known) const;

  // Inputs: an empty name is an omitted optional input.
  size_t inputCount() const { return static_cast<size_t>(proto_.input_size()); }
  bool hasInput(size_t i) const { return i < inputCount() && !proto_.input(i).empty(); }
  TensorType inputType(size_t i) const;
  // Its value when known at import (an initializer, a Constant, folded shape arithmetic).
  const Tensor* constant(size_t i) const;
  // An input that is a setting (axes, a shape, pads, a bound): a constant, or a graph input
  // whose file the run gives; fails, naming `what`, otherwise.
  const Tensor* setting(size_t i, const char* what) const;
  std::vector<int64_t> constantInts(size_t i, const char* what) const;  // a setting's integers
  double settingScalar(size_t i, const char* what) const;
  // A setting that older opsets give as attribute `name` and newer ones as input i.
  std::optional<std::vector<int64_t>> intsOf(const char* name, size_t i) const;
  std::optional<double> constantScalar(size_t i) const;  // a one-element constant's value
  // The gxc name of input i, for a layer's `inputs`: a constant becomes a param.
  std::string use(size_t i);
  // A constant the translator made (indices it fixed), as a param named after the node.
  std::string useConstant(Tensor value, const char* what);

  // Emits a layer (op and attributes) reading `inputs`; returns its name, which is the
  // node's own when `last`, else the node's with a suffix.
  std::string emit(const std::string& op, const std::vector<std::string>& inputs,
                   YAML::Node attrs = YAML::Node(YAML::NodeType::Map), bool last = true);
  // Emits the layer that computes output i (of a node with several), named by that output
  // where it is a graph output.
  std::string emitOutput(size_t i, const std::string& op, const std::vector<std::string>& inputs,
                         YAML::Node attrs = YAML::Node(YAML::NodeType::Map));
  // A layer with several results (split, topk): its results' names, one per ONNX output.
  std::vector<std::string> emitMulti(const std::string& op, const std::vector<std::string>& inputs,
                                     YAML::Node attrs, size_t results);
  TensorType typeOf(const std::string& gxcName) const;

  size_t outputCount() const { return static_cast<size_t>(proto_.output_size()); }
  void setOutput(size_t i, const std::string& gxcName);
  void setOutputConstant(size_t i, Tensor value);

  template <typename... Args>
  [[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) const {
    modelError(loc(), "{} node: {}", opType(), fmt::format(format, std::forward<Args>(args)...));
  }

 private:
  const onnx::AttributeProto* attr(const char* name) const;
  void addLayer(const std::string& name, const std::string& op,
                const std::vector<std::string>& inputs, YAML::Node attrs);

  OnnxImporter& importer_;
  const onnx::NodeProto& proto_;
  int index_;
  int emitted_ = 0;
};

// A translator handles one ONNX op type (all the opsets from 13 on that gxc reads).
using OnnxTranslator = void (*)(OnnxNode&);
using OnnxTranslators = std::map<std::string, OnnxTranslator>;
void addElementwiseTranslators(OnnxTranslators& table);
void addShapeTranslators(OnnxTranslators& table);
void addNnTranslators(OnnxTranslators& table);
void addReductionTranslators(OnnxTranslators& table);
// Evaluates the node at import when every input is a constant and the op is one of the shape
// arithmetic ops (onnx_fold.cpp); false when it is not.
bool foldOnnxNode(OnnxNode& node);

// YAML values, written as a model file spells them.
YAML::Node yamlInts(const std::vector<int64_t>& values);
// A number with a point or an exponent, so that it reads back as a float, never an integer.
std::string yamlFloat(double value);
// gxc's name of a dtype (f32, i64, ...).
std::string dtypeText(DType dtype);

}  // namespace gxc
