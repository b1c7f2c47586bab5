// Layers and groups: ops, their attributes, the params that layers create (named as PyTorch
// names them, so a state_dict loads unchanged), and their devices.
#include <algorithm>
#include <cmath>

#include <fmt/ranges.h>

#include "frontend/model_builder.h"
#include "ir/conv_geometry.h"
#include "ir/infer_type.h"

namespace gxc {
namespace {

// How many inputs a layer lists in the model file (params it creates are not listed).
std::pair<int, int> modelInputCount(OpKind kind, bool hasScalar) {
  if (isElementwiseBinary(kind)) return hasScalar ? std::pair{1, 1} : std::pair{2, 2};
  switch (kind) {
    case OpKind::Matmul:
    case OpKind::MseLoss:
    case OpKind::CrossEntropy:
      return {2, 2};
    case OpKind::Concat:
      return {1, -1};
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

// Attributes whose value must be positive or one of a few words.
void checkAttrValue(const YamlReader& reader, const YAML::Node& node, const std::string& key,
                    const AttrValue& value, std::string_view what) {
  if (key == "in_features" || key == "out_features" || key == "num_embeddings" ||
      key == "embedding_dim") {
    if (std::get<int64_t>(value) <= 0)
      reader.fail(node, "{}: {} must be positive, got {}", what, key, std::get<int64_t>(value));
  } else if (key == "in_channels" || key == "out_channels" || key == "groups") {
    if (std::get<int64_t>(value) <= 0)
      reader.fail(node, "{}: {} must be positive, got {}", what, key, std::get<int64_t>(value));
  } else if (key == "kernel_size" || key == "stride" || key == "dilation" || key == "padding") {
    // An int or an [h, w] pair (ir/conv_geometry.h); padding `same` is read before this.
    if (std::holds_alternative<std::string>(value)) return;
    std::vector<int64_t> pair;
    if (const auto* list = std::get_if<std::vector<int64_t>>(&value))
      pair = *list;
    else
      pair = {std::get<int64_t>(value), std::get<int64_t>(value)};
    if (pair.size() != 2)
      reader.fail(node, "{}: {} must be an integer or a list of two, got {} entries", what, key,
                  pair.size());
    const int64_t least = key == "padding" ? 0 : 1;
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
  } else if (key == "eps") {
    if (!(std::get<double>(value) >= 0))
      reader.fail(node, "{}: eps must not be negative, got {}", what, std::get<double>(value));
  }
}

}  // namespace

void ModelBuilder::collectLayerNames(const YAML::Node& layers) {
  for (const YAML::Node& layer : layers) {
    if (!layer.IsMap()) continue;  // reported when the layer is read
    // One walk over the keys (the first of each, as yaml-cpp's lookup finds): this runs once
    // per layer of the file.
    std::optional<YAML::Node> group, children, name;
    for (const auto& entry : layer) {
      const std::string& key = entry.first.Scalar();
      std::optional<YAML::Node>* slot = key == "group"    ? &group
                                        : key == "layers" ? &children
                                        : key == "name"   ? &name
                                                          : nullptr;
      if (slot && !*slot) *slot = entry.second;
    }
    if (group && children && children->IsSequence())
      collectLayerNames(*children);
    else if (name && name->IsScalar())
      layerNamesAhead_.emplace(name->Scalar(), reader_.loc(*name).line);
  }
}

void ModelBuilder::readLayers(const YAML::Node& layers, std::optional<Device> scopeDevice) {
  for (const YAML::Node& layer : layers) {
    reader_.requireMap(layer, "a layer");
    std::optional<YAML::Node> groupNode = findKey(layer, "group");
    if (!groupNode) {
      readLayer(layer, scopeDevice);
      continue;
    }
    std::string group = reader_.name(*groupNode, "a group name");
    std::string what = fmt::format("group '{}'", group);
    reader_.checkKeys(layer, {"group", "device", "layers"}, what);
    std::optional<Device> inner = scopeDevice;
    if (layer["device"]) inner = device(layer["device"], what);
    YAML::Node children = reader_.required(layer, "layers", what);
    reader_.requireSequence(children, fmt::format("the layers of {}", what));
    readLayers(children, inner);
  }
}

Value* ModelBuilder::resolveInput(const YAML::Node& node, const std::string& layer) {
  std::string name = reader_.name(node, fmt::format("layer '{}': an input", layer));
  if (Value* value = graph_->find(name)) return value;
  if (name == layer) reader_.fail(node, "layer '{}' uses itself as an input", layer);
  auto ahead = layerNamesAhead_.find(name);
  if (ahead != layerNamesAhead_.end())
    reader_.fail(node,
                 "layer '{}': input '{}' is defined later, at line {} (layers run in order and "
                 "may only use names defined before them)",
                 layer, name, ahead->second);
  reader_.fail(node, "layer '{}': unknown input '{}' (not an input, param or earlier layer)", layer,
               name);
}

Attrs ModelBuilder::layerAttrs(const YAML::Node& layer, OpKind kind, const std::string& name) {
  Attrs attrs;
  std::string what = fmt::format("layer '{}'", name);
  for (const auto& entry : layer) {
    std::string key = entry.first.Scalar();
    bool structural = key == "name" || key == "op" || key == "inputs" ||
                      (key == "device" && kind != OpKind::To) ||
                      (key == "weight" && kind == OpKind::CrossEntropy);
    if (structural) continue;
    const AttrSpec* spec = nullptr;
    for (const AttrSpec& candidate : opSchema(kind).attrs)
      if (candidate.name == key) spec = &candidate;
    GXC_CHECK(spec, "key '{}' passed the key check of {}", key, what);
    const YAML::Node& node = entry.second;
    std::string attrWhat = fmt::format("{} of {}", key, what);
    AttrValue value;
    if (key == "padding" && node.IsScalar() && !isIntegerText(node.Scalar())) {
      if (node.Scalar() != "same")
        reader_.fail(node,
                     "{}: conv2d: padding must be an integer, a list of two or `same`, got '{}'",
                     what, node.Scalar());
      value = std::string("same");
    } else if ((spec->kinds & maskOf(AttrKind::IntList)) && node.IsSequence()) {
      std::vector<int64_t> list;
      for (const YAML::Node& item : node) list.push_back(reader_.integer(item, attrWhat));
      value = list;
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

std::vector<Value*> ModelBuilder::createdParams(const YAML::Node& layer, OpKind kind,
                                                const std::string& name,
                                                const std::vector<Value*>& inputs,
                                                const Attrs& attrs) {
  SourceLoc loc = reader_.loc(layer);
  auto uniform = [](double bound) {
    Attrs init;
    init.set("init", std::string("uniform"));
    init.set("low", -bound);
    init.set("high", bound);
    return init;
  };
  auto named = [&](const char* what, DType dtype, Shape shape, Attrs init) {
    std::string paramName = name + "." + what;
    if (!checkedNumel(shape))
      reader_.fail(layer,
                   "layer '{}': param '{}' of shape {} has more elements than fit in 64 bits", name,
                   paramName, shapeString(shape));
    define(paramName, layer);
    return addParam(paramName, TensorType::of(dtype, std::move(shape)), init, loc);
  };
  DType dtype = inputs[0]->type.dtype;
  std::vector<Value*> params;
  if (kind == OpKind::Linear) {
    int64_t in = attrs.getInt("in_features", 0), out = attrs.getInt("out_features", 0);
    // nn.Linear's default: kaiming_uniform(a=sqrt(5)) for the weight and U(+-1/sqrt(in)) for
    // the bias, which both come to a bound of 1/sqrt(in_features).
    double bound = 1.0 / std::sqrt(static_cast<double>(in));
    params.push_back(named("weight", dtype, {out, in}, uniform(bound)));
    if (attrs.getBool("bias", true)) params.push_back(named("bias", dtype, {out}, uniform(bound)));
  } else if (kind == OpKind::LayerNorm && attrs.getBool("affine", true)) {
    const TensorType& x = inputs[0]->type;
    if (x.rank() == 0)
      reader_.fail(layer, "layer '{}': layer_norm: needs at least one dimension, got {}", name,
                   x.withoutDevice());
    Attrs ones, zeros;
    ones.set("init", std::string("ones"));
    zeros.set("init", std::string("zeros"));
    params.push_back(named("weight", dtype, {x.shape.back()}, ones));
    params.push_back(named("bias", dtype, {x.shape.back()}, zeros));
  } else if (kind == OpKind::Conv2d) {
    int64_t in = attrs.getInt("in_channels", 0), out = attrs.getInt("out_channels", 0);
    int64_t groups = attrs.getInt("groups", 1);
    if (in % groups != 0 || out % groups != 0)
      reader_.fail(layer,
                   "layer '{}': conv2d: groups = {} must divide in_channels = {} and "
                   "out_channels = {}",
                   name, groups, in, out);
    auto [kh, kw] = *attrPair(attrs, "kernel_size", 1);
    // nn.Conv2d's default, as nn.Linear's: kaiming_uniform(a=sqrt(5)) for the weight and
    // U(+-1/sqrt(fan_in)) for the bias, both a bound of 1/sqrt(in/groups * kh * kw).
    double bound = 1.0 / std::sqrt(static_cast<double>(in / groups * kh * kw));
    params.push_back(named("weight", dtype, {out, in / groups, kh, kw}, uniform(bound)));
    if (attrs.getBool("bias", true)) params.push_back(named("bias", dtype, {out}, uniform(bound)));
  } else if (kind == OpKind::Embedding) {
    Attrs normal;  // nn.Embedding's default: N(0, 1)
    normal.set("init", std::string("normal"));
    normal.set("mean", 0.0);
    normal.set("std", 1.0);
    params.push_back(named("weight", DType::F32,
                           {attrs.getInt("num_embeddings", 0), attrs.getInt("embedding_dim", 0)},
                           normal));
  } else if (kind == OpKind::CrossEntropy && layer["weight"]) {
    std::string weight = reader_.name(layer["weight"], "weight");
    if (!paramNames_.count(weight))
      reader_.fail(layer["weight"], "layer '{}': weight '{}' must name a param declared before it",
                   name, weight);
    params.push_back(graph_->find(weight));
  }
  return params;
}

void ModelBuilder::readLayer(const YAML::Node& layer, std::optional<Device> scopeDevice) {
  YAML::Node nameNode = reader_.required(layer, "name", "a layer");
  std::string name = reader_.name(nameNode, "a layer name");
  std::string what = fmt::format("layer '{}'", name);
  YAML::Node opNode = reader_.required(layer, "op", what);
  std::string opText = reader_.scalar(opNode, "op");
  auto kind = parseOpKind(opText);
  if (!kind || !isModelOp(*kind))
    reader_.fail(opNode, "{}: unknown op '{}' (ops: {})", what, opText,
                 fmt::join(modelOpNames(), ", "));
  std::vector<std::string_view> allowed = {"name", "op", "inputs", "device"};
  for (const AttrSpec& spec : opSchema(*kind).attrs)
    if (spec.name != "device" && !spec.compilerOnly) allowed.emplace_back(spec.name);
  if (*kind == OpKind::CrossEntropy) allowed.emplace_back("weight");
  reader_.checkKeys(layer, allowed, fmt::format("{} layer '{}'", opText, name));
  for (const AttrSpec& spec : opSchema(*kind).attrs)
    if (spec.required) reader_.required(layer, std::string(spec.name).c_str(), what);

  YAML::Node inputsNode = reader_.required(layer, "inputs", what);
  reader_.requireSequence(inputsNode, fmt::format("the inputs of {}", what));
  std::vector<Value*> inputs;
  for (const YAML::Node& input : inputsNode) inputs.push_back(resolveInput(input, name));
  Attrs attrs = layerAttrs(layer, *kind, name);
  auto [least, most] = modelInputCount(*kind, attrs.has("scalar"));
  int count = static_cast<int>(inputs.size());
  if (count < least || (most >= 0 && count > most))
    reader_.fail(inputsNode, "{}: {} takes {}{} input{}, got {}", what, opText,
                 most < 0 ? "at least " : "", least, least == 1 && most == 1 ? "" : "s", count);

  // Its own device, its innermost group's, the device of moved data it reads (the first such
  // input's), the model's default, or unplaced (model-format.md, Devices).
  Device place;
  std::optional<YAML::Node> deviceNode = findKey(layer, "device");
  auto moved = std::find_if(inputs.begin(), inputs.end(),
                            [&](const Value* input) { return movedData_.count(input) != 0; });
  bool followsData = false;
  if (*kind == OpKind::To) {
    place = *parseDevice(attrs.getString("device", "cpu"));
  } else if (deviceNode) {
    place = device(*deviceNode, what);
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
  std::vector<Value*> operands = inputs;
  for (Value* param : createdParams(layer, *kind, name, inputs, attrs)) operands.push_back(param);
  Op* op = graph_->appendOp(*kind, operands, name, TensorType{false, DType::F32, {}, place}, attrs,
                            reader_.loc(layer));
  op->result->type = inferResultType(*op);
  if (*kind == OpKind::To || followsData) movedData_.emplace(op->result, place);
}

}  // namespace gxc
