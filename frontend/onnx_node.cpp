// What a translator of one ONNX node sees and does (see onnx_node.h).
#include "frontend/onnx_node.h"

#include <algorithm>
#include <cmath>

#include "frontend/onnx_importer.h"
#include "tensor/npy.h"

namespace gxc {

YAML::Node yamlInts(const std::vector<int64_t>& values) {
  YAML::Node list(YAML::NodeType::Sequence);
  for (int64_t value : values) list.push_back(value);
  list.SetStyle(YAML::EmitterStyle::Flow);
  return list;
}

std::string yamlFloat(double value) {
  if (std::isnan(value)) return ".nan";
  if (std::isinf(value)) return value > 0 ? ".inf" : "-.inf";
  std::string text = fmt::format("{}", value);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

std::string dtypeText(DType dtype) { return std::string(dtypeName(dtype)); }

OnnxNode::OnnxNode(OnnxImporter& importer, const onnx::NodeProto& proto, int index)
    : importer_(importer), proto_(proto), index_(index) {}

int64_t OnnxNode::opset() const { return importer_.model_.opset; }

SourceLoc OnnxNode::loc() const {
  return SourceLoc::ofNode(importer_.model_.path, index_, proto_.name());
}

const onnx::AttributeProto* OnnxNode::attr(const char* name) const {
  for (const onnx::AttributeProto& attribute : proto_.attribute())
    if (attribute.name() == name) return &attribute;
  return nullptr;
}

int64_t OnnxNode::intAttr(const char* name, int64_t fallback) const {
  const onnx::AttributeProto* a = attr(name);
  return a ? a->i() : fallback;
}

double OnnxNode::floatAttr(const char* name, double fallback) const {
  const onnx::AttributeProto* a = attr(name);
  return a ? static_cast<double>(a->f()) : fallback;
}

std::string OnnxNode::stringAttr(const char* name, const std::string& fallback) const {
  const onnx::AttributeProto* a = attr(name);
  return a ? a->s() : fallback;
}

std::vector<int64_t> OnnxNode::intsAttr(const char* name, std::vector<int64_t> fallback) const {
  const onnx::AttributeProto* a = attr(name);
  if (!a) return fallback;
  return {a->ints().begin(), a->ints().end()};
}

std::vector<double> OnnxNode::floatsAttr(const char* name) const {
  const onnx::AttributeProto* a = attr(name);
  if (!a) return {};
  return {a->floats().begin(), a->floats().end()};
}

std::optional<Tensor> OnnxNode::tensorAttr(const char* name) const {
  const onnx::AttributeProto* a = attr(name);
  if (!a || !a->has_t()) return std::nullopt;
  return readOnnxTensor(
      a->t(), importer_.model_,
      fmt::format("attribute '{}' of node {} \"{}\"", name, index_, proto_.name()));
}

void OnnxNode::checkAttrs(std::initializer_list<const char*> known) const {
  for (const onnx::AttributeProto& attribute : proto_.attribute())
    if (std::none_of(known.begin(), known.end(),
                     [&](const char* name) { return attribute.name() == name; }))
      fail("attribute '{}' is not supported by gxc's import of {}", attribute.name(), opType());
}

const Tensor* OnnxNode::constant(size_t i) const {
  if (!hasInput(i)) return nullptr;
  const std::string& name = proto_.input(static_cast<int>(i));
  auto known = importer_.constants_.find(name);
  if (known != importer_.constants_.end()) return &known->second.tensor;
  if (importer_.gxcName_.count(name)) return nullptr;  // computed, or a graph input
  auto initializer = importer_.initializers_.find(name);
  if (initializer == importer_.initializers_.end()) return nullptr;
  Tensor tensor =
      readOnnxTensor(*initializer->second, importer_.model_, fmt::format("initializer '{}'", name));
  return &importer_.constants_.emplace(name, OnnxConstant{std::move(tensor)}).first->second.tensor;
}

const Tensor* OnnxNode::setting(size_t i, const char* what) const {
  if (const Tensor* value = constant(i)) return value;
  const std::string name = hasInput(i) ? proto_.input(static_cast<int>(i)) : std::string();
  // A graph input that settles a shape, axes or pads is bound by the run's file for it, as a
  // symbolic dimension is: the model is lowered for those values.
  auto given = importer_.givenOnnxInputs_.find(name);
  if (given != importer_.givenOnnxInputs_.end()) {
    auto read = importer_.settingInputs_.find(name);
    if (read == importer_.settingInputs_.end())
      read = importer_.settingInputs_.emplace(name, readNpy(given->second.file)).first;
    return &read->second;
  }
  fail(
      "its {} (input {}, '{}') must be known when the model is lowered: a constant, an "
      "initializer, shape arithmetic, or a graph input given by --input; gxc does not take it "
      "computed at run time",
      what, i, name);
}

std::vector<int64_t> OnnxNode::constantInts(size_t i, const char* what) const {
  // A setting computed from the dynamic axes holds this binding's numbers: an import writes
  // what it becomes with the axes' names, or refuses it (onnx_dynamic_axes.cpp).
  const Tensor* value = setting(i, what);
  if (value->dtype() != DType::I64 && value->dtype() != DType::I32)
    fail("its {} must be integers, got {}", what, dtypeName(value->dtype()));
  std::vector<int64_t> ints(static_cast<size_t>(value->numel()));
  for (int64_t k = 0; k < value->numel(); ++k) ints[static_cast<size_t>(k)] = value->loadInt(k);
  return ints;
}

std::optional<std::vector<int64_t>> OnnxNode::intsOf(const char* name, size_t i) const {
  if (hasAttr(name)) return intsAttr(name);
  if (hasInput(i)) return constantInts(i, name);
  return std::nullopt;
}

double OnnxNode::settingScalar(size_t i, const char* what) const {
  const Tensor* value = setting(i, what);
  if (value->numel() != 1) fail("its {} must be one number, got {} of them", what, value->numel());
  return value->loadDouble(0);
}

std::optional<double> OnnxNode::constantScalar(size_t i) const {
  const Tensor* value = constant(i);
  if (!value || value->numel() != 1) return std::nullopt;
  return value->loadDouble(0);
}

TensorType OnnxNode::inputType(size_t i) const {
  if (const Tensor* value = constant(i)) return TensorType::of(value->dtype(), value->shape());
  const std::string& name = proto_.input(static_cast<int>(i));
  auto gxc = importer_.gxcName_.find(name);
  GXC_CHECK(gxc != importer_.gxcName_.end(), "input '{}' has no value", name);
  return typeOf(gxc->second);
}

TensorType OnnxNode::typeOf(const std::string& gxcName) const {
  const Value* value = importer_.builder_->find(gxcName);
  GXC_CHECK(value, "no gxc value '{}'", gxcName);
  return value->type;
}

std::string OnnxNode::use(size_t i) {
  if (!hasInput(i)) fail("input {} is required", i);
  const std::string& name = proto_.input(static_cast<int>(i));
  auto gxc = importer_.gxcName_.find(name);
  if (gxc != importer_.gxcName_.end()) return gxc->second;
  GXC_CHECK(constant(i), "input '{}' has no value", name);
  return importer_.paramFor(name, importer_.constants_.at(name), loc());
}

std::string OnnxNode::useConstant(Tensor value, const char* what) {
  std::string base = proto_.name().empty() ? proto_.output(0) : proto_.name();
  return importer_.paramFor(fmt::format("{}.{}", base, what), OnnxConstant{std::move(value)},
                            loc());
}

std::string OnnxNode::emit(const std::string& op, const std::vector<std::string>& inputs,
                           YAML::Node attrs, bool last) {
  if (last && outputCount() > 0) return emitOutput(0, op, inputs, std::move(attrs));
  std::string base = proto_.name().empty() ? proto_.output(0) : proto_.name();
  std::string name = importer_.uniqueName(last ? base : fmt::format("{}_{}", base, ++emitted_));
  addLayer(name, op, inputs, std::move(attrs));
  return name;
}

std::string OnnxNode::emitOutput(size_t i, const std::string& op,
                                 const std::vector<std::string>& inputs, YAML::Node attrs) {
  // The layer that gives the node its result is named by the node, or by the graph output it
  // computes: the output file is named after it.
  const std::string& output = proto_.output(static_cast<int>(i));
  std::string name;
  if (importer_.graphOutputs_.count(output))
    name = importer_.uniqueName(output);
  else if (i == 0)
    name = importer_.uniqueName(proto_.name().empty() ? output : proto_.name());
  else
    name = importer_.uniqueName(
        fmt::format("{}_{}", proto_.name().empty() ? proto_.output(0) : proto_.name(), ++emitted_));
  addLayer(name, op, inputs, std::move(attrs));
  setOutput(i, name);
  return name;
}

void OnnxNode::addLayer(const std::string& name, const std::string& op,
                        const std::vector<std::string>& inputs, YAML::Node attrs) {
  YAML::Node layer(YAML::NodeType::Map);
  layer["name"] = name;
  layer["op"] = op;
  YAML::Node list(YAML::NodeType::Sequence);
  for (const std::string& input : inputs) list.push_back(input);
  list.SetStyle(YAML::EmitterStyle::Flow);
  layer["inputs"] = list;
  for (const auto& entry : attrs) layer[entry.first.Scalar()] = entry.second;
  layer.SetStyle(YAML::EmitterStyle::Flow);
  importer_.addLayer(layer, loc(), opType());
}

std::vector<std::string> OnnxNode::emitMulti(const std::string& op,
                                             const std::vector<std::string>& inputs,
                                             YAML::Node attrs, size_t results) {
  std::string base = proto_.name().empty() ? proto_.output(0) : proto_.name();
  std::vector<std::string> names;
  YAML::Node outputs(YAML::NodeType::Sequence);
  for (size_t i = 0; i < results; ++i) {
    bool named = i < outputCount() && !proto_.output(static_cast<int>(i)).empty();
    names.push_back(importer_.uniqueName(named ? proto_.output(static_cast<int>(i))
                                               : fmt::format("{}_unused{}", base, i)));
    outputs.push_back(names.back());
  }
  outputs.SetStyle(YAML::EmitterStyle::Flow);
  attrs["outputs"] = outputs;
  addLayer(importer_.uniqueName(base), op, inputs, attrs);
  for (size_t i = 0; i < results && i < outputCount(); ++i)
    if (!proto_.output(static_cast<int>(i)).empty()) setOutput(i, names[i]);
  return names;
}

void OnnxNode::setOutput(size_t i, const std::string& gxcName) {
  importer_.gxcName_[proto_.output(static_cast<int>(i))] = gxcName;
}

void OnnxNode::setOutputConstant(size_t i, Tensor value) {
  bool dynamic = false;
  for (size_t k = 0; k < inputCount(); ++k) {
    if (!hasInput(k)) continue;
    auto known = importer_.constants_.find(proto_.input(static_cast<int>(k)));
    if (known != importer_.constants_.end()) dynamic |= known->second.fromDynamicAxes;
  }
  // Shape and Size of a computed value read this binding's dims.
  if ((opType() == "Shape" || opType() == "Size") && importer_.hasDynamicAxes_ && !constant(0))
    dynamic = true;
  importer_.constants_[proto_.output(static_cast<int>(i))] =
      OnnxConstant{std::move(value), dynamic};
}

}  // namespace gxc
