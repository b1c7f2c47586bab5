// Layers and groups: ops, their attributes and their devices (the params that layers create
// are layer_params.cpp's).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <system_error>

#include <fmt/ranges.h>

#include "frontend/model_builder.h"
#include "ir/did_you_mean.h"
#include "ir/infer_type.h"

namespace gxc {
namespace {

// How many inputs a layer lists in the model file (params it creates are not listed).
std::pair<int, int> modelInputCount(OpKind kind, bool hasScalar) {
  if (takesScalar(kind)) return hasScalar ? std::pair{1, 1} : std::pair{2, 2};
  switch (kind) {
    case OpKind::Where:
      return {3, 3};
    case OpKind::MaskedFill:
    case OpKind::Matmul:
    case OpKind::MseLoss:
    case OpKind::CrossEntropy:
    case OpKind::Gather:
    case OpKind::IndexSelect:
    case OpKind::NllLoss:
    case OpKind::BceWithLogits:
    case OpKind::L1Loss:
    case OpKind::SmoothL1Loss:
      return {2, 2};
    case OpKind::Concat:
      return {1, -1};
    case OpKind::ScaledDotProductAttention:  // q, k, v and an optional mask
      return {3, 4};
    // x, or x with the params it would create, given as tensors (F.conv2d, F.batch_norm,
    // F.layer_norm): how an imported ONNX model passes its weights.
    case OpKind::Conv2d:
    case OpKind::ConvTranspose2d:
    case OpKind::LayerNorm:
      return {1, 3};
    case OpKind::BatchNorm:
      return {1, 5};
    case OpKind::RmsNorm:
      return {1, 2};
    default:
      return {1, 1};
  }
}

// Whether a YAML scalar reads as an integer: conv2d's padding is one, a pair or a word.
bool isIntegerText(const std::string& text) {
  size_t start = !text.empty() && (text[0] == '-' || text[0] == '+') ? 1 : 0;
  return text.size() > start &&
         std::all_of(text.begin() + static_cast<std::ptrdiff_t>(start), text.end(),
                     [](unsigned char c) { return std::isdigit(c) != 0; });
}

// A `scalar` or a clamp bound written as an integer (that fits in 64 bits) stays one, exactly
// (beyond 2^53 too): with an integer tensor it keeps the op integer, as a Python int does in
// torch, where a number written with a point or an exponent makes it float.
bool isExactIntegerNumber(const std::string& key, const YamlNode& node) {
  if ((key != "scalar" && key != "min" && key != "max") || !node.isScalar() ||
      !isIntegerText(node.scalar()))
    return false;
  const std::string& text = node.scalar();
  int64_t value = 0;
  const char* begin = text.data() + (text.starts_with('+') ? 1 : 0);
  return std::from_chars(begin, text.data() + text.size(), value).ec == std::errc();
}

// Attributes whose value must be positive or one of a few words.
void checkAttrValue(const YamlReader& reader, const YamlNode& node, const std::string& key,
                    const AttrValue& value, std::string_view what) {
  if (key == "in_features" || key == "out_features" || key == "num_embeddings" ||
      key == "embedding_dim" || key == "chunks") {
    if (std::get<int64_t>(value) <= 0)
      reader.fail(node, "{}: {} must be positive, got {}", what, key, std::get<int64_t>(value));
  } else if (key == "in_channels" || key == "out_channels" || key == "groups") {
    if (std::get<int64_t>(value) <= 0)
      reader.fail(node, "{}: {} must be positive, got {}", what, key, std::get<int64_t>(value));
  } else if (key == "kernel_size" || key == "stride" || key == "dilation" || key == "padding" ||
             key == "output_padding" || key == "output_size") {
    // An int or an [h, w] pair (ir/conv_geometry.h, ir/pool_geometry.h); padding `same` is read
    // before this.
    if (std::holds_alternative<std::string>(value)) return;
    std::vector<int64_t> pair;
    if (const auto* list = std::get_if<std::vector<int64_t>>(&value))
      pair = *list;
    else
      pair = {std::get<int64_t>(value), std::get<int64_t>(value)};
    if (pair.size() != 2)
      reader.fail(node, "{}: {} must be an integer or a list of two, got {} entries", what, key,
                  pair.size());
    const int64_t least = key == "padding" || key == "output_padding" ? 0 : 1;
    if (pair[0] < least || pair[1] < least)
      reader.fail(node, "{}: {} must be at least {}, got [{}, {}]", what, key, least, pair[0],
                  pair[1]);
  } else if (key == "reduction") {
    const auto& text = std::get<std::string>(value);
    if (text != "mean" && text != "sum" && text != "none")
      reader.fail(node, "{}: reduction must be mean, sum or none, got '{}'", what, text);
  } else if (key == "approximate") {
    const auto& text = std::get<std::string>(value);
    if (text != "none" && text != "tanh")
      reader.fail(node, "{}: approximate must be none or tanh, got '{}'", what, text);
  } else if (key == "dtype") {  // cast's target
    const auto& text = std::get<std::string>(value);
    if (!parseDType(text))
      reader.fail(node, "{}: unknown dtype '{}'{}", what, text, unknownDTypeHint(text));
  } else if (key == "eps") {
    if (!(std::get<double>(value) >= 0))
      reader.fail(node, "{}: eps must not be negative, got {}", what, std::get<double>(value));
  }
}

bool takesWeightInputs(OpKind kind) {
  return kind == OpKind::Conv2d || kind == OpKind::ConvTranspose2d || kind == OpKind::LayerNorm ||
         kind == OpKind::BatchNorm || kind == OpKind::RmsNorm;
}

// With its weights as inputs, how many inputs such a layer has: x and the params it would
// create (the bias only with `bias`, the affine params only with `affine`).
size_t weightInputCount(OpKind kind, const Attrs& attrs) {
  if (kind == OpKind::BatchNorm) return attrs.getBool("affine", true) ? 5 : 3;
  if (kind == OpKind::LayerNorm) return 3;
  if (kind == OpKind::RmsNorm) return 2;
  return attrs.getBool("bias", true) ? 3 : 2;
}

const char* weightOrder(OpKind kind) {
  if (kind == OpKind::BatchNorm) return " (running_mean, running_var, weight, bias)";
  if (kind == OpKind::RmsNorm) return " (weight)";
  return " (weight, bias)";
}

}  // namespace

const char* weightKey(OpKind kind) {
  if (kind == OpKind::CrossEntropy || kind == OpKind::NllLoss) return "weight";
  if (kind == OpKind::BceWithLogits) return "pos_weight";
  return nullptr;
}

void ModelBuilder::collectLayerNames(const YamlNode& layers) {
  for (const YamlNode& layer : layers) {
    if (!layer.isMap()) continue;  // reported when the layer is read
    // One walk over the keys (the first of each, as layer[key] finds): this runs once
    // per layer of the file.
    std::optional<YamlNode> group, children, name, outputs;
    for (const auto& entry : layer) {
      const std::string& key = entry.first.scalar();
      std::optional<YamlNode>* slot = key == "group"     ? &group
                                      : key == "layers"  ? &children
                                      : key == "name"    ? &name
                                      : key == "outputs" ? &outputs
                                                         : nullptr;
      if (slot && !*slot) *slot = entry.second;
    }
    if (group && children && children->isSequence()) {
      collectLayerNames(*children);
      continue;
    }
    if (name && name->isScalar()) layerNamesAhead_.emplace(name->scalar(), reader_.loc(*name).line);
    // The results of a layer with several results (`split`, `chunk`) are named there.
    if (outputs && outputs->isSequence())
      for (const YamlNode& output : *outputs)
        if (output.isScalar()) layerNamesAhead_.emplace(output.scalar(), reader_.loc(output).line);
  }
}

void ModelBuilder::readLayers(const YamlNode& layers, std::optional<Device> scopeDevice) {
  for (const YamlNode& layer : layers) {
    reader_.requireMap(layer, "a layer");
    YamlNode groupNode = layer["group"];
    if (!groupNode) {
      readLayer(layer, scopeDevice);
      continue;
    }
    std::string group = reader_.name(groupNode, "a group name");
    std::string what = fmt::format("group '{}'", group);
    reader_.checkKeys(layer, {"group", "device", "layers"}, what);
    std::optional<Device> inner = scopeDevice;
    if (layer["device"]) inner = device(layer["device"], what);
    YamlNode children = reader_.required(layer, "layers", what);
    reader_.requireSequence(children, fmt::format("the layers of {}", what));
    readLayers(children, inner);
  }
}

Value* ModelBuilder::resolveInput(const YamlNode& node, const std::string& layer) {
  std::string name = reader_.name(node, fmt::format("layer '{}': an input", layer));
  if (Value* value = graph_->find(name)) return value;
  if (name == layer) reader_.fail(node, "layer '{}' uses itself as an input", layer);
  auto multiResult = multiResultLayers_.find(name);
  if (multiResult != multiResultLayers_.end())
    reader_.fail(node,
                 "layer '{}': input '{}' is a layer with several results, which are read by "
                 "the names its `outputs` gives them ({})",
                 layer, name, fmt::join(multiResult->second, ", "));
  if (fileLayers_ && layerNamesAhead_.empty()) collectLayerNames(fileLayers_);
  auto ahead = layerNamesAhead_.find(name);
  if (ahead != layerNamesAhead_.end())
    reader_.fail(node,
                 "layer '{}': input '{}' is defined later, at line {} (layers run in order and "
                 "may only use names defined before them)",
                 layer, name, ahead->second);
  reader_.fail(node, "layer '{}': unknown input '{}' (not an input, param or earlier layer)", layer,
               name);
}

// A reshape's or an expand's shape entries are integers (-1: checked by the shape rule) or,
// with symbolic dimensions, names and products of names and integers, evaluated in this run's
// binding.
std::vector<int64_t> ModelBuilder::shapeEntries(const YamlNode& list,
                                                const std::string& what) const {
  std::vector<int64_t> entries;
  for (const YamlNode& item : list) {
    bool integer = item.isScalar() && !item.scalar().empty() &&
                   item.scalar().find_first_not_of("-0123456789") == std::string::npos;
    if (integer || !item.isScalar() || item.tag() == "!") {
      entries.push_back(reader_.integer(item, what));
      continue;
    }
    std::string error;
    std::optional<int64_t> value = dims_.evaluate(item.scalar(), &error);
    if (!value) reader_.fail(item, "{}: {}", what, error);
    entries.push_back(*value);
  }
  return entries;
}

Attrs ModelBuilder::layerAttrs(const YamlNode& layer, OpKind kind, const std::string& name) {
  Attrs attrs;
  std::string what = fmt::format("layer '{}'", name);
  for (const auto& entry : layer) {
    std::string key = entry.first.scalar();
    bool structural = key == "name" || key == "op" || key == "inputs" ||
                      (key == "device" && kind != OpKind::To) ||
                      (weightKey(kind) && key == weightKey(kind)) ||
                      (key == "outputs" && (isMultiResultLayer(kind) || kind == OpKind::Max)) ||
                      (key == "indices" && kind == OpKind::Max);
    if (structural) continue;
    const AttrSpec* spec = nullptr;
    for (const AttrSpec& candidate : opSchema(kind).attrs)
      if (candidate.name == key) spec = &candidate;
    GXC_CHECK(spec, "key '{}' passed the key check of {}", key, what);
    const YamlNode& node = entry.second;
    std::string attrWhat = fmt::format("{} of {}", key, what);
    AttrValue value;
    if ((kind == OpKind::Reshape || kind == OpKind::Expand) && key == "shape" &&
        node.isSequence()) {
      value = shapeEntries(node, attrWhat);
    } else if (key == "padding" && (spec->kinds & maskOf(AttrKind::String)) && node.isScalar() &&
               !isIntegerText(node.scalar())) {
      if (node.scalar() != "same")
        reader_.fail(node, "{}: {}: padding must be an integer, a list of two or `same`, got '{}'",
                     what, opName(kind), node.scalar());
      value = std::string("same");
    } else if ((spec->kinds & maskOf(AttrKind::IntList)) && node.isSequence()) {
      std::vector<int64_t> list;
      for (const YamlNode& item : node) list.push_back(reader_.integer(item, attrWhat));
      value = list;
    } else if (isExactIntegerNumber(key, node)) {
      value = reader_.integer(node, attrWhat);
    } else if (spec->kinds & maskOf(AttrKind::Float)) {
      value = reader_.number(node, attrWhat);
    } else if (spec->kinds & maskOf(AttrKind::Int)) {
      value = reader_.integer(node, attrWhat);
    } else if (spec->kinds & maskOf(AttrKind::Bool)) {
      value = reader_.boolean(node, attrWhat);
    } else if (spec->kinds & maskOf(AttrKind::String)) {
      value = reader_.scalar(node, attrWhat);
    } else {
      reader_.fail(node, "{} must be a list of integers, got {}", attrWhat, nodeKindName(node));
    }
    checkAttrValue(reader_, node, key, value, what);
    if (key == "device" && kind == OpKind::To) value = device(node, what).str();
    attrs.set(key, value);
  }
  return attrs;
}

void ModelBuilder::readLayer(const YamlNode& layer, std::optional<Device> scopeDevice) {
  YamlNode nameNode = reader_.required(layer, "name", "a layer");
  std::string name = reader_.name(nameNode, "a layer name");
  std::string what = fmt::format("layer '{}'", name);
  YamlNode opNode = reader_.required(layer, "op", what);
  std::string opText = reader_.scalar(opNode, "op");
  auto kind = parseOpKind(opText);
  if (!kind || !isModelOp(*kind))
    reader_.fail(opNode, "{}: unknown op '{}'{}", what, opText, unknownOpHint(opText));
  std::vector<std::string_view> allowed = {"name", "op", "inputs", "device"};
  for (const AttrSpec& spec : opSchema(*kind).attrs)
    if (spec.name != "device" && !spec.compilerOnly) allowed.emplace_back(spec.name);
  if (weightKey(*kind)) allowed.emplace_back(weightKey(*kind));
  if (isMultiResultLayer(*kind)) allowed.emplace_back("outputs");
  if (*kind == OpKind::Max) allowed.insert(allowed.end(), {"indices", "outputs"});
  reader_.checkKeys(layer, allowed, fmt::format("{} layer '{}'", opText, name));
  for (const AttrSpec& spec : opSchema(*kind).attrs)
    if (spec.required) reader_.required(layer, std::string(spec.name).c_str(), what);

  YamlNode inputsNode = reader_.required(layer, "inputs", what);
  reader_.requireSequence(inputsNode, fmt::format("the inputs of {}", what));
  std::vector<Value*> inputs;
  for (const YamlNode& input : inputsNode) inputs.push_back(resolveInput(input, name));
  Attrs attrs = layerAttrs(layer, *kind, name);
  auto [least, most] = modelInputCount(*kind, attrs.has("scalar"));
  int count = static_cast<int>(inputs.size());
  if (count < least || (most >= 0 && count > most))
    reader_.fail(inputsNode, "{}: {} takes {}{} input{}, got {}", what, opText,
                 most < 0 ? "at least " : "", least, least == 1 && most == 1 ? "" : "s", count);

  // Its own device, its innermost group's, the device of moved data it reads (the first such
  // input's), the model's default, or unplaced (model-format.md, Devices).
  Device place;
  YamlNode deviceNode = layer["device"];
  auto moved = std::find_if(inputs.begin(), inputs.end(),
                            [&](const Value* input) { return movedData_.count(input) != 0; });
  bool followsData = false;
  if (*kind == OpKind::To) {
    place = *parseDevice(attrs.getString("device", "cpu"));
  } else if (deviceNode) {
    place = device(deviceNode, what);
  } else if (scopeDevice) {
    place = *scopeDevice;
  } else if (moved != inputs.end()) {
    place = movedData_.at(*moved);
    followsData = true;
  } else if (defaultDevice_) {
    place = *defaultDevice_;
  }

  // Before its params, so that a repeated layer name is reported as such, not as the clash of
  // the params both layers create.
  define(name, nameNode);
  if (hasSeveralResults(layer, *kind, name)) {
    std::vector<std::string>& outputs = multiResultLayers_[name];
    for (LayerResult& result : layerResults(layer, *kind, name, inputs[0]->type, attrs)) {
      outputs.push_back(result.name);
      Op* op = graph_->appendOp(result.kind, inputs, result.name,
                                TensorType{false, DType::F32, {}, place}, result.attrs,
                                reader_.loc(layer));
      op->result->type = inferResultType(*op);
      if (followsData) movedData_.emplace(op->result, place);
    }
    return;
  }
  if (*kind == OpKind::Matmul && matmulIsLowered(inputs)) {
    Value* result = lowerMatmul(layer, name, inputs, attrs, place);
    if (followsData) movedData_.emplace(result, place);
    return;
  }
  if (*kind == OpKind::Slice) attrs = sliceAttrs(layer, name, inputs[0]->type, attrs);
  std::vector<Value*> operands = inputs;
  if (inputs.size() == 1 || !takesWeightInputs(*kind)) {
    for (Value* param : createdParams(layer, *kind, name, inputs, attrs)) operands.push_back(param);
  } else if (size_t wanted = weightInputCount(*kind, attrs); inputs.size() != wanted) {
    reader_.fail(inputsNode,
                 "{}: {} takes x alone, or x and its {} weight tensors{}, got {} inputs", what,
                 opText, wanted - 1, weightOrder(*kind), count);
  }
  Op* op = graph_->appendOp(*kind, operands, name, TensorType{false, DType::F32, {}, place}, attrs,
                            reader_.loc(layer));
  op->result->type = inferResultType(*op);
  if (*kind == OpKind::To || followsData) movedData_.emplace(op->result, place);
}

}  // namespace gxc
